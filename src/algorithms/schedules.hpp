#pragma once
// Each algorithm's schedule for the cost model (algorithms/schedule.hpp): which messages travel
// at once, step by step. One function beside each algorithm, in its own file; the shared
// patterns (a ring step, the fold onto a power of two, recursive halving, a tree's
// pipelined phases) are in schedule_blocks.cpp. Message sizes are those the algorithm
// sends (simulated bytes); where its steps send unequal pieces that the formulas pace by
// the largest, the schedule does too.
#include "algorithms/chunks.hpp"
#include "algorithms/model_input.hpp"
#include "algorithms/schedule.hpp"

namespace collsim {

Schedule schedule_broadcast_binomial(const ModelInput& in);
Schedule schedule_broadcast_flat(const ModelInput& in);
Schedule schedule_broadcast_pipeline(const ModelInput& in);
Schedule schedule_broadcast_scatter_allgather(const ModelInput& in);
Schedule schedule_reduce_binomial(const ModelInput& in);
Schedule schedule_reduce_flat(const ModelInput& in);
Schedule schedule_allreduce_naive(const ModelInput& in);
Schedule schedule_allreduce_naive_binomial(const ModelInput& in);
Schedule schedule_allreduce_ring(const ModelInput& in);
Schedule schedule_allreduce_recursive_doubling(const ModelInput& in);
Schedule schedule_allreduce_rabenseifner(const ModelInput& in);
Schedule schedule_allreduce_binary_tree(const ModelInput& in);
Schedule schedule_allreduce_double_binary_tree(const ModelInput& in);
Schedule schedule_allreduce_direct(const ModelInput& in);
Schedule schedule_allreduce_hierarchical(const ModelInput& in);
Schedule schedule_allreduce_parameter_server(const ModelInput& in);
Schedule schedule_allreduce_nccl_ring(const ModelInput& in);
Schedule schedule_allreduce_nccl_tree(const ModelInput& in);
Schedule schedule_allreduce_nccl_nvls(const ModelInput& in);
Schedule schedule_allreduce_nccl_nvls_tree(const ModelInput& in);
Schedule schedule_allreduce_nccl_collnet_direct(const ModelInput& in);
Schedule schedule_allreduce_nccl_collnet_chain(const ModelInput& in);
Schedule schedule_reduce_scatter_ring(const ModelInput& in);
Schedule schedule_reduce_scatter_recursive_halving(const ModelInput& in);
Schedule schedule_allgather_ring(const ModelInput& in);
Schedule schedule_alltoall_pairwise(const ModelInput& in);
Schedule schedule_alltoall_direct(const ModelInput& in);
Schedule schedule_alltoall_nccl(const ModelInput& in);
Schedule schedule_allgather_recursive_doubling(const ModelInput& in);
Schedule schedule_allreduce_student(const ModelInput& in);  // lab 7: src/algorithms/student.cpp
Schedule schedule_broadcast_student(const ModelInput& in);

// Shared patterns (schedule_blocks.cpp).

// `repeat` ring steps: every rank r sends `bytes` to r+1 (mod p) at once (and reduces what
// it receives when `reduced`).
void ring_steps(Schedule& schedule, int p, double bytes, int repeat, bool reduced = false);

// `repeat` steps of the k = bytes.size() channels' rings at once (channel_ring; one channel:
// the ranks in order), each member of channel c's ring sending bytes[c] to the next.
void channel_ring_steps(Schedule& schedule, const ModelInput& in, const std::vector<double>& bytes, int repeat,
                        bool reduced);
// The same for reduce-scatter and allgather, whose channel c carries part c of every rank's
// chunk (RingTask's parts): bytes of the largest part.
void channel_ring_steps(Schedule& schedule, const ModelInput& in, int repeat, bool reduced);

// A reduce-scatter then an allgather of `steps` identical steps each: one run of 2 x steps
// when reductions are free (ModelInput::reduce_bandwidth infinite), else the reducing run
// then the other. Each entry: its repeat count and whether its receivers reduce.
struct StepRun {
  int repeat;
  bool reduced;
};
std::vector<StepRun> reduce_then_gather(const ModelInput& in, int steps);

// The fold's step: each even rank 2i below 2 rem sends chunk_bytes(i) to 2i+1 (inward), or
// 2i+1 sends to 2i (outward). Nothing when p is a power of two.
enum class FoldDirection { inward, outward };
template <typename BytesFn>
void fold_step(Schedule& schedule, const PowerOfTwoFold& fold, FoldDirection direction, BytesFn chunk_bytes) {
  if (fold.rem == 0) return;
  Step& step = schedule.step();
  step.reduced = direction == FoldDirection::inward;
  for (int i = 0; i < fold.rem; ++i) {
    const double bytes = chunk_bytes(i);
    if (direction == FoldDirection::inward) step.send(2 * i, 2 * i + 1, bytes);
    else step.send(2 * i + 1, 2 * i, bytes);
  }
}

// Recursive halving among the pof2 ranks left by the fold (distance pof2/2 first: new rank
// v sends the half of its window holding v's partner's blocks), or doubling (distance 1
// first: v sends the window it holds).
void halving_steps(Schedule& schedule, const ModelInput& in, const PowerOfTwoFold& fold,
                   const std::vector<Chunk>& blocks);
void doubling_steps(Schedule& schedule, const ModelInput& in, const PowerOfTwoFold& fold,
                    const std::vector<Chunk>& blocks);

// A binomial tree from `root`, whole messages of `bytes`: broadcast (the farthest subtree
// first) or reduce (the nearest first).
void binomial_broadcast_steps(Schedule& schedule, int p, int root, double bytes);
void binomial_reduce_steps(Schedule& schedule, int p, int root, double bytes);

// Reduce up then broadcast down the trees of a TreeSchedule, tree t carrying segments[t]
// (the step schedule of chunks.hpp); with p = 2 the segments stream over the one edge.
void tree_phases(Schedule& schedule, const ModelInput& in, const TreeSchedule& trees,
                 const std::vector<std::vector<Chunk>>& segments);

}  // namespace collsim
