#pragma once
// `collsim model --algorithm all` on a GPU platform: NCCL's algorithms ranked beside collsim's.
// Each (algorithm, protocol) NCCL's tuner would consider, with the channels it would give it,
// priced by the model on NCCL's own platform (PXN routes, NCCL's transport: plan/nccl_run.hpp),
// each in its own process (a platform built for NCCL differs from the one collsim's algorithms
// run on, and SimGrid builds one per process).
#include <string>

#include "scenario/scenario.hpp"

namespace collsim {

// The ranking's lines ("" when the collective is not an allreduce or the platform's hosts
// name no GPU). Call before this process creates an engine.
std::string rank_nccl_variants(const Scenario& scenario);

}  // namespace collsim
