#pragma once
// What `collsim validate --plan` prints for a scenario with parallelism: the run's plan
// (plan/plan_json.hpp) without the one collective a plain run plans (its payload, algorithm,
// cost model and training), and instead the parallel run's own decisions: its layout, and
// its communicators' groups and algorithms or its training step (docs/parallelism.md).
#include <nlohmann/json.hpp>

#include "plan/run_plan.hpp"

namespace collsim {

nlohmann::json parallel_plan_json(const RunPlan& plan);

}  // namespace collsim
