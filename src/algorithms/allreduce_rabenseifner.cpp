// Rabenseifner's allreduce (Thakur, Rabenseifner & Gropp 2005; MPICH's
// reduce_scatter_allgather): recursive-halving reduce-scatter, then recursive-doubling
// allgather, over the pof2 ranks left after folding the first 2 rem ranks in pairs.
// Bandwidth like the ring, latency like recursive doubling:
// 2 log2(pof2) alpha + 2 (pof2-1)/pof2 n/B, plus 2 (alpha + n/B) for the fold when p is not
// a power of two.
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

// rabenseifner-begin
void allreduce_rabenseifner(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int r = comm.rank();
  const PowerOfTwoFold fold = fold_to_power_of_two(comm.size());
  // 1. fold: an even rank below 2 rem hands its vector to the odd rank above it, then waits
  if (!fold_vector_in(comm, buf, *args.op, fold)) {
    comm.recv(r + 1, buf.all());
    return;
  }
  // 2. reduce-scatter by recursive halving: new rank i ends with block i fully reduced
  const auto blocks = split_evenly(buf.size(), fold.pof2);
  reduce_scatter_halving(comm, buf, *args.op, fold, blocks);
  // 3. allgather by recursive doubling: every new rank ends with every block
  allgather_doubling(comm, buf, fold, blocks);
  // 4. unfold: give the even partner its result
  unfold_result(comm, fold, buf.all());
}
// rabenseifner-end

// Fold (whole vector), recursive halving then doubling over pof2 blocks, unfold.
Schedule schedule_allreduce_rabenseifner(const ModelInput& in) {
  Schedule schedule;
  const PowerOfTwoFold fold = fold_to_power_of_two(in.p);
  const double whole = in.bytes(in.elems);
  const auto blocks = split_evenly(in.elems, fold.pof2);
  fold_step(schedule, fold, FoldDirection::inward, [&](int) { return whole; });
  halving_steps(schedule, in, fold, blocks);
  doubling_steps(schedule, in, fold, blocks);
  fold_step(schedule, fold, FoldDirection::outward, [&](int) { return whole; });
  return schedule;
}

}  // namespace collsim
