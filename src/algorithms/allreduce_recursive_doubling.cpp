// Recursive-doubling allreduce (MPICH; Thakur, Rabenseifner & Gropp 2005): at step s each
// rank swaps its whole vector with the rank 2^s away and reduces, so after log2 p steps
// every rank holds the full reduction. For p not a power of two, the first 2 rem ranks
// fold in pairs first and get the result back last:
// (floor(log2 p) + 2 [p not a power of 2]) (alpha + n/B).
//
//   p=8:  step 0: 0<->1 2<->3 4<->5 6<->7   step 1: 0<->2 1<->3 ...   step 2: 0<->4 1<->5 ...
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void allreduce_recursive_doubling(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int r = comm.rank();
  const PowerOfTwoFold fold = fold_to_power_of_two(comm.size());
  // 1. fold: an even rank below 2 rem hands its vector to the odd rank above it, then waits
  if (!fold_vector_in(comm, buf, *args.op, fold)) {
    comm.recv(r + 1, buf.all());
    return;
  }
  // 2. recursive doubling among the pof2 ranks left: swap whole vectors, reduce
  const int me = fold.new_rank(r);
  Buffer incoming = buf.scratch(buf.size());
  for (int mask = 1, step = 0; mask < fold.pof2; mask *= 2, ++step) {
    const int partner = fold.old_rank(me ^ mask);
    comm.label("recursive-doubling", step);
    comm.sendrecv(partner, buf.all(), partner, incoming.all());
    args.op->combine(buf.all(), incoming.all());
  }
  // 3. unfold: give the even partner its result
  unfold_result(comm, fold, buf.all());
}

// Fold, whole vectors swapped at distance 1, 2, 4, ... among pof2 ranks, unfold.
Schedule schedule_allreduce_recursive_doubling(const ModelInput& in) {
  Schedule schedule;
  const PowerOfTwoFold fold = fold_to_power_of_two(in.p);
  const double whole = in.bytes(in.elems);
  fold_step(schedule, fold, FoldDirection::inward, [&](int) { return whole; });
  for (int distance = 1; distance < fold.pof2; distance *= 2) {
    Step& step = schedule.step();
    step.reduced = true;
    for (int v = 0; v < fold.pof2; ++v) step.send(fold.old_rank(v), fold.old_rank(v ^ distance), whole);
  }
  fold_step(schedule, fold, FoldDirection::outward, [&](int) { return whole; });
  return schedule;
}

}  // namespace collsim
