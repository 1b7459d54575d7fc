// Recursive-doubling allgather (Thakur, Rabenseifner & Gropp 2005): at step s each rank
// swaps everything it holds with the rank 2^s away, so the data held doubles every step.
// For p not a power of two the first 2 rem ranks fold in pairs first (the even rank's
// chunk goes to the odd one) and the even ones get the whole vector back last.
// Power of two: log2 p alpha + (p-1)/p n/B.
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void allgather_recursive_doubling(Comm& comm, Buffer& buf, const CollectiveArgs&) {
  const int r = comm.rank();
  const auto chunks = split_evenly(buf.size(), comm.size());
  auto chunk = [&](int index) { return buf.view(chunks[index].offset, chunks[index].count); };
  const PowerOfTwoFold fold = fold_to_power_of_two(comm.size());
  // 1. fold: an even rank below 2 rem gives its chunk to the odd rank above it, then waits
  if (r < 2 * fold.rem) {
    comm.label("fold", 0);
    if (r % 2 == 0) {
      comm.send(r + 1, chunk(r));
      comm.recv(r + 1, buf.all());
      return;
    }
    comm.recv(r - 1, chunk(r - 1));
  }
  // 2. recursive doubling among the pof2 ranks left
  allgather_doubling(comm, buf, fold, fold.blocks(chunks));
  // 3. unfold: give the even partner the whole vector
  unfold_result(comm, fold, buf.all());
}

// The reduce-scatter's messages in reverse: fold (one chunk), doubling, unfold (whole vector).
Schedule schedule_allgather_recursive_doubling(const ModelInput& in) {
  Schedule schedule;
  const PowerOfTwoFold fold = fold_to_power_of_two(in.p);
  const auto chunks = split_evenly(in.elems, in.p);
  fold_step(schedule, fold, FoldDirection::inward,
            [&](int i) { return in.bytes(chunks[static_cast<size_t>(2 * i)].count); });
  doubling_steps(schedule, in, fold, fold.blocks(chunks));
  fold_step(schedule, fold, FoldDirection::outward, [&](int) { return in.bytes(in.elems); });
  return schedule;
}

}  // namespace collsim
