// Naive allreduce, the textbook baseline: a flat reduce to the root, then a flat
// broadcast from it. The root's link carries 2(p-1) whole vectors, so the time grows
// linearly with p: 2 (alpha + (p-1) n/B).
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void allreduce_naive(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  reduce_flat(comm, buf, args);
  broadcast_flat(comm, buf, args);
}

Schedule schedule_allreduce_naive(const ModelInput& in) {
  Schedule schedule = schedule_reduce_flat(in);
  schedule.then(schedule_broadcast_flat(in));
  return schedule;
}

}  // namespace collsim
