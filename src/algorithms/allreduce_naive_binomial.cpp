// Reduce then broadcast over binomial trees: 2 ceil(log2 p) (alpha + n/B).
// Latency-friendly, but every round still moves the whole vector.
#include "algorithms/algorithms.hpp"

namespace collsim {

void allreduce_naive_binomial(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  reduce_binomial(comm, buf, args);
  broadcast_binomial(comm, buf, args);
}

}  // namespace collsim
