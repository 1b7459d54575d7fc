// Binomial-tree broadcast (as in MPICH): ceil(log2 p) rounds of one whole message.
// In round k every rank that already holds the data sends it 2^(K-k-1) ranks further,
// so the number of holders doubles each round.
//
//   p=8, root 0:  round 0: 0->4   round 1: 0->2, 4->6   round 2: 0->1, 2->3, 4->5, 6->7
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"
#include "algorithms/chunks.hpp"

namespace collsim {

void broadcast_binomial(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size();
  const int relative = mod(comm.rank() - args.root, p);
  const int rounds = ceil_log2(p);

  // Receive once from the parent: the rank that differs in my lowest set bit.
  int mask = 1;
  while (mask < p) {
    if (relative & mask) {
      comm.recv(mod(relative - mask + args.root, p), buf.all());
      break;
    }
    mask <<= 1;
  }
  // Then send to each child, the farthest first, so that subtrees work in parallel.
  mask >>= 1;
  while (mask > 0) {
    if (relative + mask < p) {
      comm.label("broadcast", rounds - 1 - ceil_log2(mask));
      comm.send(mod(relative + mask + args.root, p), buf.all());
    }
    mask >>= 1;
  }
}

// Followed rank by rank (as scatter-allgather's scatter): a rank sends to its next child once
// its last send is out, without waiting out the slowest hop of the step before (on GPUs a hop
// across nodes holds its receiver longer than one on NVLink).
Schedule schedule_broadcast_binomial(const ModelInput& in) {
  Schedule schedule;
  schedule.mark_rank_by_rank();
  binomial_broadcast_steps(schedule, in.p, in.root, in.bytes(in.elems));
  return schedule;
}

}  // namespace collsim
