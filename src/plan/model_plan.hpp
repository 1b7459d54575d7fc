#pragma once
// The cost model's input for a run (plan/model_plan.cpp), and auto's choice on it.
#include <cstddef>
#include <vector>

#include "plan/run_plan.hpp"

namespace simgrid::s4u {
class Host;
}

namespace collsim {

// Elements per pipeline segment (at least one): logical ones, whatever is carried.
size_t segment_elements(double segment_bytes, Dtype dtype);

// plan.model for the ranks on `hosts` (routes, groups, alpha and B of the chosen
// algorithm's partners) and, for --algorithm auto, plan.choice (from the `simulated`
// trials when there are some, else by model); for NCCL's algorithms ("nccl", nccl-*),
// NCCL's choice and transport (plan/nccl_run.hpp), `switches` the platform's reducing
// switches; the notes a user should read about them. Returns the ranks' locality groups.
RankLocality plan_model(const std::vector<AutoCandidate>& simulated, const std::vector<simgrid::s4u::Host*>& hosts,
                        const std::vector<simgrid::s4u::Host*>& switches, RunPlan& plan);

}  // namespace collsim
