// Naive allreduce, the textbook baseline: a flat reduce to the root, then a flat
// broadcast from it. The root's link carries 2(p-1) whole vectors, so the time grows
// linearly with p: 2 (alpha + (p-1) n/B).
#include "algorithms/algorithms.hpp"

namespace collsim {

void allreduce_naive(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  reduce_flat(comm, buf, args);
  broadcast_flat(comm, buf, args);
}

}  // namespace collsim
