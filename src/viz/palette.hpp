#pragma once
// Colours of the pictures: one per algorithm phase (the same phase always gets the same
// colour, in every picture), and the colours of compute, waits, faults and recovery.
#include <string>
#include <string_view>
#include <vector>

namespace collsim::viz {

class Palette {
public:
  explicit Palette(const std::vector<std::string>& phases);
  // Sends are drawn in the phase colour, receives in its light tint.
  const std::string& color(int phase) const { return colors_[static_cast<size_t>(phase)]; }
  const std::string& light(int phase) const { return lights_[static_cast<size_t>(phase)]; }
  const std::string& dark(int phase) const { return darks_[static_cast<size_t>(phase)]; }

private:
  std::vector<std::string> colors_, lights_, darks_;
};

// Mixes "#rrggbb" with white (amount > 0) or black (amount < 0); amount in [-1, 1].
std::string tint(std::string_view color, double amount);

// Whether the receiver reduces what a message of this phase brings (rather than copying it).
bool phase_reduces(std::string_view phase);

namespace colors {
inline constexpr const char* compute = "#c9d1db";
inline constexpr const char* wait = "#a7adb5";
inline constexpr const char* reduce = "#222831";
inline constexpr const char* fault = "#d62728";
inline constexpr const char* detection = "#f2b701";
inline constexpr const char* undetected = "#fae29b";  // the fault in effect before anything waits on it
inline constexpr const char* overhead = "#3b4450";    // a sender's per-message overhead (LogP's o)
inline constexpr const char* rebuild = "#8c564b";
inline constexpr const char* resume = "#17becf";
inline constexpr const char* dropped = "#7f7f7f";
inline constexpr const char* text = "#222831";
inline constexpr const char* muted = "#5f6b7a";
inline constexpr const char* grid = "#e3e7ec";
}  // namespace colors

}  // namespace collsim::viz
