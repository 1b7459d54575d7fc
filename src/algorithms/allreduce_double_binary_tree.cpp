// NCCL's double binary tree allreduce (Sanders, Speck & Träff 2009; NCCL 2.4): two binary
// trees in which every rank is an inner node of at most one, each reducing then
// broadcasting half of the vector in segments of collective.segment bytes. A rank's
// uplink and downlink each carry one segment per step: 2 (2k + D) (alpha + m/B) for k
// segments of m bytes per half, D = 2 log2 p - 3 when p is a power of two >= 4.
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void allreduce_double_binary_tree(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const TreeSchedule schedule = schedule_double_binary_tree(comm.size());
  // tree t carries half t of the vector, in segments
  std::vector<std::vector<Chunk>> segments;
  for (const Chunk& half : split_evenly(buf.size(), 2)) {
    segments.push_back(split_into_segments(half.count, args.segment_elems));
    for (Chunk& segment : segments.back()) segment.offset += half.offset;
  }
  // 1. reduce both halves up their trees, 2. broadcast them back down
  run_tree_phase(comm, buf, args.op, schedule, segments, TreePhase::reduce);
  run_tree_phase(comm, buf, args.op, schedule, segments, TreePhase::broadcast);
}

Schedule schedule_allreduce_double_binary_tree(const ModelInput& in) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  std::vector<std::vector<Chunk>> segments;
  for (const Chunk& half : split_evenly(in.elems, 2)) segments.push_back(split_into_segments(half.count, in.segment_elems));
  tree_phases(schedule, in, schedule_double_binary_tree(in.p), segments);
  return schedule;
}

}  // namespace collsim
