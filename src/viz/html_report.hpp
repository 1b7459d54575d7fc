#pragma once
// One self-contained HTML page about a run, needing no network: summary, timeline, time
// per round, link utilisation (which links were the bottleneck), and the algorithm step
// by step. Readable when printed.
#include <string>

#include "viz/trace_view.hpp"

namespace collsim::viz {

std::string html_report(const TraceView& trace);

}  // namespace collsim::viz
