// Ring allgather: the second half of the ring allreduce. Rank r starts with chunk r and
// passes chunks to the right for p-1 steps of n/p bytes: (p-1) (alpha + n/(pB)).
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void allgather_ring(Comm& comm, Buffer& buf, const CollectiveArgs&) {
  ring_allgather(comm, buf, comm.rank());
}

Schedule schedule_allgather_ring(const ModelInput& in) { return schedule_reduce_scatter_ring(in); }

}  // namespace collsim
