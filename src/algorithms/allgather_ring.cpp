// Ring allgather: the second half of the ring allreduce. Rank r starts with chunk r and
// passes chunks to the right for p-1 steps of n/p bytes: (p-1) (alpha + n/(pB)). With k
// channels, channel c's ring carries part c of every chunk (n/(kp) bytes per message).
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void allgather_ring(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  if (comm.size() < 2) return;
  rings_allgather(comm, buf, own_chunk_rings(comm, buf.size(), args.channels), "allgather");
}

Schedule schedule_allgather_ring(const ModelInput& in) {
  Schedule schedule;
  channel_ring_steps(schedule, in, in.p - 1, false);
  return schedule;
}

}  // namespace collsim
