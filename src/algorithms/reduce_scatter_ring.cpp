// Ring reduce-scatter: the first half of the ring allreduce, shifted so that rank r ends
// with chunk r. p-1 steps of n/p bytes: (p-1) (alpha + n/(pB)).
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void reduce_scatter_ring(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  // the whole group in rank order: rank r answers for chunk r
  RingTask ring{{}, comm.rank(), {0, buf.size()}};
  for (int r = 0; r < comm.size(); ++r) ring.members.push_back(r);
  rings_reduce_scatter(comm, buf, *args.op, {ring}, "reduce-scatter");
}

Schedule schedule_reduce_scatter_ring(const ModelInput& in) {
  Schedule schedule;
  ring_steps(schedule, in.p, in.bytes(split_evenly(in.elems, in.p).front().count), in.p - 1, true);
  return schedule;
}

}  // namespace collsim
