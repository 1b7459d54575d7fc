#pragma once
// A plan as JSON: what `collsim validate --plan` prints and the trace's "plan" section
// (contract: docs/trace-format.md#plan, docs/trace.schema.json).
#include <nlohmann/json.hpp>
#include <vector>

#include "plan/run_plan.hpp"

namespace collsim {

nlohmann::json plan_json(const RunPlan& plan);

// --algorithm auto's table, best first (the trace's auto.candidates and the plan's).
nlohmann::json candidates_json(const std::vector<AutoCandidate>& candidates);

}  // namespace collsim
