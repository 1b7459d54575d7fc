// Binomial-tree reduce (as in MPICH, commutative ops): the mirror of the binomial
// broadcast. In round k, ranks whose relative rank has bit k set send their partial
// result to the rank without it and drop out: ceil(log2 p) rounds of one message.
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"
#include "algorithms/chunks.hpp"

namespace collsim {

void reduce_binomial(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size();
  const int relative = mod(comm.rank() - args.root, p);
  Buffer incoming = buf.scratch(buf.size());

  for (int mask = 1, round = 0; mask < p; mask <<= 1, ++round) {
    if (relative & mask) {
      // My subtree is complete: hand the partial result to my parent and stop.
      comm.label("reduce", round);
      comm.send(mod(relative - mask + args.root, p), buf.all());
      return;
    }
    // Receive the partial result of the child subtree, if that child exists, and fold it in.
    if (relative + mask < p) {
      comm.recv(mod(relative + mask + args.root, p), incoming.all());
      args.op->combine(buf.all(), incoming.all());
    }
  }
}

// Followed rank by rank: a rank sends its sum up once its own children's are in, whatever the
// other branches' hops cost (on GPUs across nodes or on NVLink).
Schedule schedule_reduce_binomial(const ModelInput& in) {
  Schedule schedule;
  schedule.mark_rank_by_rank();
  binomial_reduce_steps(schedule, in.p, in.root, in.bytes(in.elems));
  return schedule;
}

}  // namespace collsim
