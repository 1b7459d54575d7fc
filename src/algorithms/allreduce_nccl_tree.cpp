// NCCL's tree allreduce (src/device/all_reduce.h, runTreeSplit; trees from src/graph/trees.cc):
// a chain inside each node, NCCL's double binary tree across the nodes' heads, the vector cut
// into lanes (half on each tree, each lane's chains headed by another GPU and so leaving through
// another NIC) and in chunks: reduced up to the roots, which send the chunks down, each rank's
// reduce up and broadcast down two streams. nccl_trees.hpp plans every message: a chunk's hops
// are heads, which a rank passes on as soon as they are in (cut-through), a lane's bytes one body
// per hop, a rank's streams merged in time order.
#include <deque>
#include <algorithm>

#include "algorithms/algorithms.hpp"
#include "algorithms/nccl_trees.hpp"
#include "algorithms/pipelined_rounds.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

namespace {

// The rank's messages in rounds (one per step it takes part in), each with the view it
// sends or lands in: partial sums from below land in scratch (and are reduced into the
// rank's chunk after their round), the final chunks in place.
struct TreeRounds {
  PlannedRounds rounds;
  std::vector<std::vector<std::pair<View, View>>> reductions;  // [round]: (into, from)
  std::deque<Buffer> slots;  // scratch, one per partial sum, shaped as the chunk it stands for
};

TreeRounds plan_rounds(const NcclTrees& trees, int rank, Buffer& buf) {
  const auto messages = trees.messages_of(rank);
  std::vector<int> steps;  // each round's step
  for (const auto& m : messages)
    if (steps.empty() || steps.back() != m.step) steps.push_back(m.step);
  TreeRounds plan{PlannedRounds(steps.size()), std::vector<std::vector<std::pair<View, View>>>(steps.size()), {}};
  size_t round = 0;
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    if (i > 0 && m.step != messages[i - 1].step) ++round;
    const Chunk c = trees.chunk(m.lane, m.chunk);
    View view = buf.view(c.offset, c.count);
    // a receive is waited for (and reduced) in the round before the step that uses it
    const int wait = m.send ? -1 : round_waiting(steps, m.step + m.wait);
    if (!m.send && m.up && !m.body) {
      plan.slots.push_back(buf.scratch(c.count));
      const View from = plan.slots.back().holding(view);
      plan.reductions[static_cast<size_t>(wait)].emplace_back(view, from);
      view = from;
    }
    // cut-through (nccl_trees.hpp): a head carries its chunk's data as 0 bytes, a body the
    // lane's bytes without data
    if (m.body) view = View{view.data, 0, view.elem_bytes, trees.slice(m.lane).count};
    else view.logical = 0;
    PlannedMessage planned{m.peer, m.send, view};
    planned.wait_round = wait;
    planned.at_end = m.body && m.send;
    plan.rounds[round].push_back(planned);
  }
  return plan;
}

// The heads carry no bytes (nccl_trees.hpp): a rank posts every receive at once and waits for
// its sends in its last round, so that a head moves as soon as its sender has it. NCCL's FIFO
// bounds the bytes in flight on a connection, which its one body carries.
int all_rounds(size_t rounds) { return std::max(1, static_cast<int>(rounds)); }

}  // namespace

// nccl-tree-begin
void allreduce_nccl_tree(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  if (comm.size() == 1) return;
  const NcclTrees trees(localities_of(comm), args.channels, buf.size(), args.segment_elems, args.hop_inside, args.hop_across);
  TreeRounds plan = plan_rounds(trees, comm.rank(), buf);
  // up: the partial sums from below go into mine; down: the final chunks land in place
  run_pipelined(comm, plan.rounds, all_rounds(plan.rounds.size()), "tree", [&](int q) {
    for (const auto& [into, from] : plan.reductions[static_cast<size_t>(q)]) args.op->combine(into, from);
  });
}
// nccl-tree-end

// Every message at its step, the ranks followed one by one.
Schedule schedule_allreduce_nccl_tree(const ModelInput& in) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  schedule.mark_rank_by_rank();
  const std::vector<int> locality = localities_of(in);
  const NcclTrees trees(locality, in.channels, in.elems, in.segment_elems, in.hop_inside, in.hop_across);
  std::vector<std::vector<Flow>> steps;
  for (int rank = 0; rank < in.p; ++rank)
    for (const auto& m : trees.messages_of(rank)) {
      if (!m.send) continue;
      if (steps.size() <= static_cast<size_t>(m.step)) steps.resize(static_cast<size_t>(m.step) + 1);
      const double bytes = m.body ? in.bytes(trees.slice(m.lane).count) : 0;  // a head: 0 bytes
      steps[static_cast<size_t>(m.step)].push_back({rank, m.peer, bytes, 0, false, m.wait});
    }
  for (const auto& flows : steps) {
    Step& step = schedule.step();
    step.fifo = all_rounds(steps.size());  // at least any rank's rounds
    // (NCCL's algorithms run with free reductions: nccl/transport.hpp)
    for (const Flow& flow : flows) step.send(flow.src, flow.dst, flow.bytes).flows.back().wait_steps = flow.wait_steps;
  }
  return schedule;
}

}  // namespace collsim
