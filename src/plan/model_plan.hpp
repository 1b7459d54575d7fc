#pragma once
// The cost model's input for a run (plan/model_plan.cpp), and auto's choice on it.
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "model/network.hpp"
#include "model/platform_host.hpp"
#include "model/rank_places.hpp"

#include "plan/run_plan.hpp"

namespace simgrid::s4u {
class Host;
}

namespace collsim {

// Elements per pipeline segment (at least one): logical ones, whatever is carried.
size_t segment_elements(double segment_bytes, Dtype dtype);

// The platform as the model sees it: the ranks' routes (their endpoints) and places and, when
// the platform is built in SimGrid, the ranks' hosts (the parameter server's deployment reads
// them; empty otherwise). For NCCL's algorithms, from SimGrid's platform or the generator's
// structure alike: the ranks' hosts and the reducing switches as NCCL reads them, and the
// ranks' routes with some of those switches (their indices) as endpoints after the ranks'.
struct ModelPlatform {
  std::shared_ptr<const Network> network;
  RankPlaces places;
  std::vector<simgrid::s4u::Host*> hosts;
  std::vector<PlatformHost> rank_hosts, switch_hosts;
  std::function<std::shared_ptr<const Network>(const std::vector<int>&)> with_switches;
  // collsim's own algorithms run on NCCL's send/recv here (RunPlan::PlatformPlan::gpu_transport)
  bool gpu_transport = false;
};

// plan.model for the ranks of `platform` (routes, groups, alpha and B of the chosen
// algorithm's partners) and, for --algorithm auto, plan.choice (from the `simulated`
// trials when there are some, else by model); for NCCL's algorithms ("nccl", nccl-*),
// NCCL's choice and transport (plan/nccl_run.hpp), `switches` the platform's reducing
// switches; the notes a user should read about them. Returns the ranks' locality groups.
RankLocality plan_model(const std::vector<AutoCandidate>& simulated, const ModelPlatform& platform, RunPlan& plan);

// hierarchical's levels against its groups (model.group_sizes or its locality): halving and
// doubling needs a power of two of members in every group (intra) and of groups (inter).
// The errors name `intra` and `inter` (the scenario's fields, or collsim model's flags).
void check_levels(const ModelInput& model, const char* intra = "collective.intra", const char* inter = "collective.inter");

}  // namespace collsim
