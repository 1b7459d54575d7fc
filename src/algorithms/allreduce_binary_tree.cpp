// Pipelined binary-tree allreduce: the vector is cut into k segments of collective.segment
// bytes, reduced up a binary tree (heap order from the root: rank i's children are 2i+1 and
// 2i+2) and then broadcast down it. Each rank sends one message and receives one per step,
// serving its two children on alternate steps: 2 (2k - 2 + W) (alpha + n/(kB)) for p >= 3,
// W the tree's depth counted with 2 for every turn to a second child.
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void allreduce_binary_tree(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const TreeSchedule schedule = schedule_binary_tree(comm.size(), args.root);
  const std::vector<std::vector<Chunk>> segments{split_into_segments(buf.size(), args.segment_elems)};
  // 1. reduce: partial results of every segment flow up to the root
  run_tree_phase(comm, buf, args.op, schedule, segments, TreePhase::reduce);
  // 2. broadcast: the reduced segments flow back down
  run_tree_phase(comm, buf, args.op, schedule, segments, TreePhase::broadcast);
}

Schedule schedule_allreduce_binary_tree(const ModelInput& in) {
  Schedule schedule;
  if (in.p > 1)
    tree_phases(schedule, in, schedule_binary_tree(in.p, 0), {split_into_segments(in.elems, in.segment_elems)});
  return schedule;
}

}  // namespace collsim
