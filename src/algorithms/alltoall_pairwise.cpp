// Pairwise alltoall (MPI's pairwise exchange, NCCL's alltoall as p-1 rounds of send and
// receive): at step s = 1 .. p-1 rank r sends its block r+s to rank r+s and receives rank
// r-s's block r (mod p). Every rank sends and receives one block per step, so on a
// contention-free network each step costs one message: (p-1)(alpha + n/(pB)).
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void alltoall_pairwise(Comm& comm, Buffer& buf, const CollectiveArgs&) {
  const int p = comm.size(), r = comm.rank();
  // Received blocks go to a second buffer: block r-s arrives while block r+s' (s' > s)
  // still has to leave from the same place once s > p/2.
  Buffer out = buf;
  for (int s = 1; s < p; ++s) {
    const int to = (r + s) % p, from = (r - s + p) % p;
    comm.label("exchange", s - 1);
    comm.sendrecv(to, buf.block(p, to), from, out.block(p, from));
  }
  buf = std::move(out);
}

// Step s: every rank sends block r+s to rank r+s (p-1 steps of one block per rank).
Schedule schedule_alltoall_pairwise(const ModelInput& in) {
  Schedule schedule;
  // a rank's exchange at distance s waits only for its own two partners of step s-1:
  // where routes differ in length the ranks drift apart
  schedule.mark_rank_by_rank();
  for (int s = 1; s < in.p; ++s) {
    Step& step = schedule.step();
    for (int r = 0; r < in.p; ++r) {
      const int to = (r + s) % in.p;
      step.send(r, to, in.bytes(alltoall_block(in.elems, in.p, to).count));
    }
  }
  return schedule;
}

}  // namespace collsim
