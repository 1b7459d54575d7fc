// Ring reduce-scatter: the first half of the ring allreduce, shifted so that rank r ends
// with chunk r. p-1 steps of n/p bytes: (p-1) (alpha + n/(pB)). With k channels (NCCL's),
// channel c's ring carries part c of every rank's chunk, all k rings at once: p-1 steps of
// n/(kp) bytes per ring.
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void reduce_scatter_ring(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  // every rank answers for its own chunk (part c of it on channel c)
  if (comm.size() < 2) return;
  rings_reduce_scatter(comm, buf, *args.op, own_chunk_rings(comm, buf.size(), args.channels), "reduce-scatter");
}

Schedule schedule_reduce_scatter_ring(const ModelInput& in) {
  Schedule schedule;
  channel_ring_steps(schedule, in, in.p - 1, true);
  return schedule;
}

}  // namespace collsim
