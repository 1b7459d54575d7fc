#pragma once
// What a parallel run's collectives cost on GPUs (docs/parallelism.md#on-gpus). On a platform
// whose hosts are GPUs a message pays what NCCL charges for it, as in a run of one collective
// (plan/nccl_run.hpp): collsim's own algorithms run on NCCL's send/recv (each message's
// protocol by its size, a hop's latency, the kernel's launch for the collective's own vector);
// NCCL's allreduces ("nccl", nccl-ring, nccl-tree) run what NCCL's tuner picks for the group as
// its communicator sees it (its GPUs, its nodes, its GPUs per node) at the collective's size,
// on that choice's transport.
#include <optional>
#include <string>
#include <vector>

#include "nccl/system.hpp"
#include "parallel/communicators.hpp"

namespace collsim {

// The GPU system of the run's ranks, from their hosts in the engine's platform (nullopt:
// not every rank is a GPU, or nccl.gpu_cost is false).
std::optional<nccl::GpuSystem> run_gpu_system(const RunPlan& plan);

// collsim's own algorithm in `chosen` on the group `members` (world ranks), on GPUs: its
// messages on NCCL's send/recv as the group's communicator sends them, its launch that of a
// vector of `bytes`.
void price_send_recv(const nccl::GpuSystem& world, const std::vector<int>& members, double bytes, GroupAlgorithm& chosen);

// NCCL's allreduce (`asked`: "nccl", the tuner's choice, or one of NCCL's, forced) of `bytes`
// per rank in the group `members` (world ranks), with the scenario's nccl.proto and
// nccl.channels. NVLS, NVLSTree and CollNet take part where the platform has the switches the
// group needs (parallel/group_switches.hpp) and `switches_follow` (false: a group that recovery
// may rebuild). Throws InputError naming `where` when the forced one cannot run.
GroupAlgorithm nccl_group_allreduce(const RunPlan& plan, const nccl::GpuSystem& world, const std::string& asked,
                                    double bytes, Dtype dtype, const std::vector<int>& members, const std::string& where,
                                    bool switches_follow = true);

}  // namespace collsim
