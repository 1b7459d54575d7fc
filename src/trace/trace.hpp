#pragma once
// The JSON trace (contract, docs/trace-format.md, "format": "collsim-trace/1").
#include <nlohmann/json.hpp>
#include <string>

#include "run/summary.hpp"

namespace collsim {

constexpr const char* trace_format = "collsim-trace/1";

// Above this many messages the trace lists one entry per (phase, step) unless full detail
// is asked for.
constexpr size_t full_detail_message_limit = 20000;

nlohmann::json build_trace(const Scenario& scenario, const SimResult& result, const RunSummary& summary,
                           bool full_detail);

}  // namespace collsim
