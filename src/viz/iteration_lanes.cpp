#include "viz/iteration_lanes.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "util/units.hpp"
#include "viz/palette.hpp"
#include "viz/svg.hpp"

namespace collsim::viz {
namespace {

constexpr const char* forward_color = "#6a51a3";
constexpr const char* backward_color = "#e6ab02";
constexpr const char* comm_color = "#1b7f79";
constexpr double row_height = 12, row_gap = 2, rank_gap = 6, header = 34;

// Neighbouring layers and buckets alternate between the colour and a lighter tint, so that
// each one reads apart.
std::string fill_of(const TraceActivity& a) {
  if (a.abandoned) return colors::fault;
  const char* base = a.comm ? comm_color : a.what == "forward" ? forward_color : backward_color;
  return a.index % 2 == 0 ? std::string(base) : tint(base, 0.35);
}

std::string tooltip(const TraceView& trace, const TraceActivity& a) {
  std::string what;
  if (a.comm) {
    what = fmt::format("{} of bucket {}", a.what, a.index);
    if (static_cast<size_t>(a.index) < trace.buckets.size()) {
      const TraceBucket& b = trace.buckets[static_cast<size_t>(a.index)];
      what += fmt::format(" (layers {}–{}, {})", b.first_layer, b.last_layer, format_size(b.bytes, 3));
    }
    if (a.abandoned) what += ", abandoned";
  } else {
    what = fmt::format("{} of layer {}", a.what, a.index);
  }
  return fmt::format("rank {} · round {} · epoch {} · {} · {} – {}", a.rank, a.round, a.epoch, what,
                     short_time(a.start), short_time(a.end));
}

double x_of(const IterationLanesPlace& place, double time) {
  return place.left + std::clamp(time / place.end, 0.0, 1.0) * place.plot_width;
}

std::string legend(const IterationLanesPlace& place, double y, bool abandoned) {
  std::string out;
  double x = place.left;
  auto item = [&](const std::string& color, const std::string& label) {
    out += fmt::format(R"~(<rect x="{}" y="{}" width="14" height="10" fill="{}"/><text x="{}" y="{}" class="label">{}</text>)~",
                       num(x), num(y), color, num(x + 20), num(y + 9.5), esc(label));
    x += 20 + static_cast<double>(label.size()) * 6.3 + 16;
  };
  item(forward_color, "forward (per layer)");
  item(backward_color, "backward (per layer)");
  item(comm_color, "bucket collective (communication stream)");
  if (abandoned) item(colors::fault, "collective abandoned by a fault");
  return out;
}

}  // namespace

IterationLanes iteration_lanes_svg(const TraceView& trace, const IterationLanesPlace& place) {
  IterationLanes lanes{"", place.top};
  if (trace.activities.empty()) return lanes;
  const int ranks = std::min(trace.workers, place.max_ranks);
  const bool abandoned = std::any_of(trace.activities.begin(), trace.activities.end(),
                                     [](const TraceActivity& a) { return a.abandoned; });
  std::string out = R"~(<g class="iteration-lanes">)~";
  std::string title = "Iteration lanes: each layer's forward and backward, and each gradient bucket's collective";
  if (ranks < trace.workers) title += fmt::format(" (ranks 0–{} of {})", ranks - 1, trace.workers);
  out += fmt::format(R"~(<text x="{}" y="{}" class="label">{}</text>)~", num(place.left - 140), num(place.top + 12),
                     esc(title));
  out += legend(place, place.top + 18, abandoned);

  const double first = place.top + header;
  auto row_top = [&](int rank, bool comm) {
    return first + rank * (2 * row_height + row_gap + rank_gap) + (comm ? row_height + row_gap : 0);
  };
  for (int rank = 0; rank < ranks; ++rank)
    for (bool comm : {false, true})
      out += fmt::format(R"~(<text x="{}" y="{}" class="small" text-anchor="end">rank {} {}</text>)~",
                         num(place.left - 8), num(row_top(rank, comm) + 9.5), rank, comm ? "comm" : "compute");

  const bool tooltips = trace.activities.size() <= place.max_tooltips;
  for (const TraceActivity& a : trace.activities) {
    if (a.rank >= ranks) continue;
    const double x0 = x_of(place, a.start), width = std::max(0.6, x_of(place, a.end) - x0);
    out += fmt::format(
        R"~(<rect class="activity" x="{}" y="{}" width="{}" height="{}" fill="{}" data-rank="{}" data-lane="{}" )~"
        R"~(data-what="{}" data-{}="{}" data-round="{}" data-epoch="{}"{})~",
        num(x0), num(row_top(a.rank, a.comm)), num(width), num(row_height), fill_of(a), a.rank,
        a.comm ? "comm" : "compute", esc(a.what), a.comm ? "bucket" : "layer", a.index, a.round, a.epoch,
        a.abandoned ? R"~( data-abandoned="true")~" : "");
    out += tooltips ? "><title>" + esc(tooltip(trace, a)) + "</title></rect>" : "/>";
    // the bucket's name where it fits: 10 px text, about 5.6 px a character (DejaVu Sans)
    const std::string label = fmt::format("b{}", a.index);
    if (a.comm && width >= static_cast<double>(label.size()) * 5.6 + 2)
      out += fmt::format(R"~(<text x="{}" y="{}" class="small" text-anchor="middle" style="fill:#ffffff">{}</text>)~",
                         num(x0 + width / 2), num(row_top(a.rank, true) + 9.5), label);
  }
  out += "</g>\n";
  lanes.svg = std::move(out);
  lanes.bottom = row_top(ranks - 1, true) + row_height + 8;
  return lanes;
}

}  // namespace collsim::viz
