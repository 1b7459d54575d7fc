#pragma once
// The JSON trace (contract, docs/trace-format.md, "format": "collsim-trace/2").
#include <nlohmann/json.hpp>
#include <string>

#include "run/summary.hpp"

namespace collsim {

constexpr const char* trace_format = "collsim-trace/2";

// Lists every message when the run kept them all (PlanOptions::kept_messages, --messages),
// else one entry per (round, epoch, phase, step) and the kept ones as a sample.
nlohmann::json build_trace(const Scenario& scenario, const SimResult& result, const RunSummary& summary);
// The trace file's text: build_trace(...).dump(1) and a newline, its single messages
// written straight to text (trace/message_text.hpp) rather than built as JSON objects.
std::string trace_text(const Scenario& scenario, const SimResult& result, const RunSummary& summary);

}  // namespace collsim
