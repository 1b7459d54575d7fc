#pragma once
// The smaller pictures of the HTML report: time per round, and link utilisation over time.
#include <cstddef>
#include <string>
#include <vector>

#include "viz/trace_view.hpp"

namespace collsim::viz {

// One bar per round (computation, then the collective), epochs after a rebuild in their
// own colour; "" when the trace has no rounds.
std::string rounds_chart_svg(const TraceView& trace, double width = 1200);

// The links in order of load (bytes over what their bandwidth could carry in the run: a
// link that carries all the time at 12% of its bandwidth is not the bottleneck), then of
// busy time, then by name.
double link_load(const TraceView& trace, const TraceLink& link);
std::vector<const TraceLink*> links_by_load(const TraceView& trace);

// The links a report names as the bottleneck: those of the topology bound's cut when it is
// tighter than the lower bound, otherwise the most loaded ones when they are few.
std::vector<std::string> bottleneck_link_names(const TraceView& trace);

// Utilisation over time of the most loaded links (rows) as a heat map, with each link's
// load over the run; the bottleneck links in bold; "" when the trace has no link series.
constexpr size_t heatmap_max_links = 16;
std::string link_heatmap_svg(const TraceView& trace, double width = 1200);

}  // namespace collsim::viz
