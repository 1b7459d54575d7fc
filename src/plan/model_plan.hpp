#pragma once
// The cost model's input for a run (plan/model_plan.cpp), and auto's choice on it.
#include <cstddef>
#include <memory>
#include <vector>

#include "model/network.hpp"
#include "model/rank_places.hpp"

#include "plan/run_plan.hpp"

namespace simgrid::s4u {
class Host;
}

namespace collsim {

// Elements per pipeline segment (at least one): logical ones, whatever is carried.
size_t segment_elements(double segment_bytes, Dtype dtype);

// The platform as the model sees it: the ranks' routes (their endpoints) and places and, when
// the platform is built in SimGrid, the ranks' hosts and the reducing switches (NCCL's
// algorithms and the parameter server's deployment read them; empty otherwise).
struct ModelPlatform {
  std::shared_ptr<const Network> network;
  RankPlaces places;
  std::vector<simgrid::s4u::Host*> hosts, switches;
};

// plan.model for the ranks of `platform` (routes, groups, alpha and B of the chosen
// algorithm's partners) and, for --algorithm auto, plan.choice (from the `simulated`
// trials when there are some, else by model); for NCCL's algorithms ("nccl", nccl-*),
// NCCL's choice and transport (plan/nccl_run.hpp), `switches` the platform's reducing
// switches; the notes a user should read about them. Returns the ranks' locality groups.
RankLocality plan_model(const std::vector<AutoCandidate>& simulated, const ModelPlatform& platform, RunPlan& plan);

}  // namespace collsim
