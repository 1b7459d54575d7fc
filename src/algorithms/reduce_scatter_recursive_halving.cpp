// Recursive-halving reduce-scatter (MPICH, commutative ops; Thakur, Rabenseifner & Gropp
// 2005): at each step a rank keeps half of what it still holds and swaps the other half
// with the rank pof2/2, pof2/4, ... away. For p not a power of two the first 2 rem ranks
// fold in pairs first (the odd rank answers for both chunks) and the even ones get their
// chunk back last. Power of two: log2 p alpha + (p-1)/p n/B.
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void reduce_scatter_recursive_halving(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int r = comm.rank();
  const auto chunks = split_evenly(buf.size(), comm.size());
  auto chunk = [&](int index) { return buf.view(chunks[index].offset, chunks[index].count); };
  const PowerOfTwoFold fold = fold_to_power_of_two(comm.size());
  // 1. fold: an even rank below 2 rem hands its vector to the odd rank above it, then waits
  if (!fold_vector_in(comm, buf, *args.op, fold)) {
    comm.recv(r + 1, chunk(r));
    return;
  }
  // 2. recursive halving: new rank i ends with its block (its chunk, or its pair's two chunks)
  reduce_scatter_halving(comm, buf, *args.op, fold, fold.blocks(chunks));
  // 3. unfold: give the even partner its chunk (r - 1; the index wraps for ranks that do not unfold)
  unfold_result(comm, fold, chunk(mod(r - 1, comm.size())));
}

// Fold (whole vector), halving over the pof2 blocks (two chunks for a folded pair), unfold
// (the even rank's chunk).
Schedule schedule_reduce_scatter_recursive_halving(const ModelInput& in) {
  Schedule schedule;
  const PowerOfTwoFold fold = fold_to_power_of_two(in.p);
  const auto chunks = split_evenly(in.elems, in.p);
  fold_step(schedule, fold, FoldDirection::inward, [&](int) { return in.bytes(in.elems); });
  halving_steps(schedule, in, fold, fold.blocks(chunks));
  fold_step(schedule, fold, FoldDirection::outward,
            [&](int i) { return in.bytes(chunks[static_cast<size_t>(2 * i)].count); });
  return schedule;
}

}  // namespace collsim
