#pragma once
// The smaller pictures of the HTML report: time per round, and link utilisation over time.
#include <cstddef>
#include <string>

#include "viz/trace_view.hpp"

namespace collsim::viz {

// One bar per round (computation, then the collective), epochs after a rebuild in their
// own colour; "" when the trace has no rounds.
std::string rounds_chart_svg(const TraceView& trace, double width = 1200);

// Utilisation over time of the busiest links (rows) as a heat map, with each link's busy
// share of the run; "" when the trace has no link series.
constexpr size_t heatmap_max_links = 16;
std::string link_heatmap_svg(const TraceView& trace, double width = 1200);

}  // namespace collsim::viz
