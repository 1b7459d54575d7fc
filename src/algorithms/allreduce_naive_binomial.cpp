// Reduce then broadcast over binomial trees: 2 ceil(log2 p) (alpha + n/B).
// Latency-friendly, but every round still moves the whole vector.
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void allreduce_naive_binomial(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  reduce_binomial(comm, buf, args);
  broadcast_binomial(comm, buf, args);
}

Schedule schedule_allreduce_naive_binomial(const ModelInput& in) {
  Schedule schedule = schedule_reduce_binomial(in);
  schedule.then(schedule_broadcast_binomial(in));
  return schedule;
}

}  // namespace collsim
