#pragma once
// NCCL's variants beside collsim's algorithms: every (algorithm, protocol) NCCL's tuner would
// consider for an allreduce on GPUs, with the channels it would give it, priced by the model
// on NCCL's own platform (PXN routes, NCCL's transport: plan/nccl_run.hpp), each in its own
// process (a platform built for NCCL differs from the one collsim's algorithms run on, and
// SimGrid builds one per process), except under `collsim model` on a generated platform: no
// engine there, all priced in this process on one platform. `collsim model --algorithm all` ranks them
// (report/nccl_variants.hpp); `--algorithm auto` runs the best of them when it beats the best
// of collsim's own algorithms. Call before this process creates an engine.
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "nccl/constants.hpp"
#include "plan/planner.hpp"
#include "scenario/scenario.hpp"

namespace collsim {

struct NcclVariant {
  nccl::Algo algo = nccl::Algo::ring;
  nccl::Proto proto = nccl::Proto::simple;
  double time = std::numeric_limits<double>::infinity();  // the model's, seconds
  int channels = 0;
  std::string why_not;  // why it cannot run here (NCCL's rules, or collsim's)
};

// Every variant, fastest first (those that cannot run last); empty when the collective is no
// allreduce or the platform's hosts name no GPU. `model_only`: priced as `collsim model`
// prices (the model's own limits, no run's).
std::vector<NcclVariant> price_nccl_variants(const Scenario& scenario, bool model_only);

// --algorithm auto on GPUs: the fastest of NCCL's variants against collsim's best (the trials'
// fastest by simulation, else the model's choice, planned in a child process). Empty unless the
// scenario asks for auto on an allreduce on GPUs; `chosen` says whether NCCL's variant won.
std::optional<AutoNcclPick> pick_nccl_for_auto(const Scenario& scenario, const std::vector<std::string>& cfg,
                                               const std::vector<AutoCandidate>& trials);

}  // namespace collsim
