#pragma once
// Every algorithm, one per file. Each works for any p >= 1, any element count (also
// fewer elements than ranks) and any root. The registry (registry.hpp) names them.
#include "algorithms/collective.hpp"

namespace collsim {

void broadcast_binomial(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void broadcast_flat(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void broadcast_pipeline(Comm& comm, Buffer& buf, const CollectiveArgs& args);

void reduce_binomial(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void reduce_flat(Comm& comm, Buffer& buf, const CollectiveArgs& args);

void allreduce_naive(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_naive_binomial(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_ring(Comm& comm, Buffer& buf, const CollectiveArgs& args);

}  // namespace collsim
