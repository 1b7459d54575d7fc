#pragma once
// The HTML report of a parallel run (docs/parallelism.md#the-html-report), from its trace
// (docs/trace-format.md#parallel-runs): the layout, a step's figures and where the slowest
// rank's step went, each communicator's groups and times, and one lane per communicator per
// rank drawn from `parallel.intervals` (the intervals Perfetto draws). Self-contained, like
// the report of one collective (viz/html_report.hpp).
#include <nlohmann/json.hpp>
#include <string>

namespace collsim::viz {

// Throws InputError naming `source` when the trace's parallel section is malformed.
std::string parallel_html_report(const nlohmann::json& trace, const std::string& source);

// The report's lanes alone as one SVG picture (--svg of a parallel run): one row per
// communicator per rank of the first 16 ranks, one bar per interval of `parallel.intervals`.
std::string parallel_lanes_svg(const nlohmann::json& trace, const std::string& source);

}  // namespace collsim::viz
