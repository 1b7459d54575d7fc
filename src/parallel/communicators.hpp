#pragma once
// The collectives of a parallel run, decided before the engine runs: for each entry of
// parallelism.collectives, every group it runs in (parallel/layout.hpp), the algorithm
// (named, or auto's choice by the cost model on the first group's routes), its arguments
// and the carried elements of its vectors (the run's carried budget shared by every rank of
// every collective).
#include <memory>
#include <string>
#include <vector>

#include "comm/message_cost.hpp"

#include "algorithms/registry.hpp"
#include "plan/payload.hpp"
#include "plan/run_plan.hpp"
#include "scenario/parallelism_spec.hpp"

namespace collsim {

// The algorithm a group runs, and why.
struct GroupAlgorithm {
  const AlgorithmInfo* algorithm = nullptr;
  int channels = 1;     // auto's variant on channels
  std::string reason;   // for people
  double model_time = 0;  // the cost model's time of this group alone
  // On GPUs (parallel/gpu_costs.hpp): what its messages pay beyond their links (NCCL's
  // send/recv, or the transport of NCCL's choice; nullptr: nothing), the kernel's launch before
  // each of its collectives, NCCL's FIFO and chunk (CollectiveArgs::fifo, segment_elems; 0:
  // the default segment) and NCCL's choice for people ("Ring/LL128 on 16 channels"; empty:
  // not one of NCCL's algorithms).
  std::shared_ptr<const MessageCost> cost;
  double launch = 0;
  int fifo = 1;
  size_t segment_elems = 0;
  double hop_inside = 0, hop_across = 0;  // NCCL's hop latencies (CollectiveArgs::hop_inside, hop_across)
  std::string nccl;
};

// The algorithm `asked` ("auto", "nccl" or a name) of `kind` on the group `members`, for
// vectors of `bytes` per rank; auto by the cost model on the group's routes, nccl by NCCL's
// tuner for the group (an allreduce on GPUs: parallel/gpu_costs.hpp; NVLS and CollNet where the
// platform has the group's switches and `switches_follow`: false for a group that recovery may
// rebuild). On GPUs its messages pay what NCCL charges. Throws InputError naming `where` for
// NCCL's algorithms off GPUs or for other collectives than allreduce, other algorithms that
// reduce in switches and names unknown for the kind.
GroupAlgorithm choose_group_algorithm(const RunPlan& plan, Collective kind, const std::string& asked, double bytes,
                                      Dtype dtype, int root, const std::vector<int>& members, const std::string& where,
                                      bool switches_follow = true);

struct CommunicatorPlan {
  int index = 0;                         // in parallelism.collectives
  ParallelCollective spec;
  std::vector<std::vector<int>> groups;  // world ranks of each group, in group-rank order
  const AlgorithmInfo* algorithm = nullptr;
  std::string reason;                    // for people: why this algorithm
  int channels = 1;                      // auto's variant on channels (NCCL's lanes)
  GroupAlgorithm how;                    // what its messages pay, its launch, NCCL's FIFO and chunk
  Payload payload;                       // per rank of a group
  double model_time = 0;                 // the cost model's time of one group alone
};

// Carried elements per rank of a collective of `bytes` in groups of `group_size`: `share` of
// the run's budget, never fewer than every chunk needs (plan/payload.hpp's rule for one part).
Payload share_payload(double bytes, Dtype dtype, int group_size, int channels, double share);

// Throws InputError naming the entry when a group is too small or too large for its
// algorithm, or when `nccl` cannot run there (off GPUs, not an allreduce).
std::vector<CommunicatorPlan> plan_communicators(const RunPlan& plan);

}  // namespace collsim
