#include "viz/palette.hpp"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>

namespace collsim::viz {
namespace {

// The phases collsim's algorithms use keep their colours whatever else a trace holds.
struct Known {
  const char* phase;
  const char* color;
};
constexpr Known known_phases[] = {
    {"reduce-scatter", "#4e79a7"}, {"allgather", "#59a14f"}, {"broadcast", "#f28e2b"}, {"reduce", "#e15759"},
    {"gather", "#b07aa1"},         {"scatter", "#9c755f"},   {"collective", "#76b7b2"},
    // a parameter server's push is a reduce to the servers, its pull a broadcast from them
    {"push", "#e15759"},           {"pull", "#f28e2b"},
};
constexpr const char* spare_colors[] = {"#b07aa1", "#edc948", "#ff9da7", "#9c755f", "#76b7b2", "#86bcb6", "#d37295",
                                        "#a0cbe8", "#ffbe7d", "#8cd17d"};

}  // namespace

std::string tint(std::string_view color, double amount) {
  unsigned r = 0, g = 0, b = 0;
  if (color.size() != 7 || std::sscanf(std::string(color).c_str(), "#%02x%02x%02x", &r, &g, &b) != 3)
    return std::string(color);
  auto mix = [&](unsigned c) {
    const double value = amount >= 0 ? c + (255 - c) * amount : c * (1 + amount);
    return static_cast<unsigned>(std::clamp(value + 0.5, 0.0, 255.0));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(r), mix(g), mix(b));
}

bool phase_reduces(std::string_view phase) {
  return phase.find("reduce") != std::string_view::npos || phase == "push";
}

Palette::Palette(const std::vector<std::string>& phases) {
  // Known phases first, then spare colours that none of them shows, in order of appearance.
  colors_.assign(phases.size(), "");
  for (size_t i = 0; i < phases.size(); ++i)
    for (const Known& known : known_phases)
      if (phases[i] == known.phase) colors_[i] = known.color;
  size_t spare = 0;
  for (auto& color : colors_) {
    for (size_t tries = 0; tries < std::size(spare_colors) && color.empty(); ++tries) {
      const std::string candidate = spare_colors[spare++ % std::size(spare_colors)];
      if (std::find(colors_.begin(), colors_.end(), candidate) == colors_.end()) color = candidate;
    }
    if (color.empty()) color = spare_colors[spare++ % std::size(spare_colors)];
  }
  for (const auto& color : colors_) {
    lights_.push_back(tint(color, 0.55));
    darks_.push_back(tint(color, -0.35));
  }
}

}  // namespace collsim::viz
