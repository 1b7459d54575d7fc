#pragma once
// Every run checks every rank's result against a reference computed independently from
// the same inputs (regenerated, not taken from the simulation), in a wider type than the
// data: double for float32 and the 16-bit floats, long double for float64; integers
// modulo 2^64, wrapped to the type as its own arithmetic wraps.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "algorithms/collective.hpp"
#include "plan/input_data.hpp"

namespace collsim {

struct Verification {
  bool verified = true;
  double max_error = 0;          // largest |result - reference| over checked ranks and elements
  bool bitwise_identical = true;  // all checked ranks hold the same bits
  int checked_ranks = 0;
  uint64_t wrong_elements = 0;   // elements outside their tolerance, over every checked rank (nccl-tests' #wrong)
  std::string failure;           // first failing rank and element, if any
  // The error allowed per element, for people: "exact", "bit for bit" (data that is only
  // moved), or e.g. "7 additions x epsilon 2^-7 x sum|x|" (the type's epsilon times the
  // number of roundings).
  std::string tolerance = "exact";
};

// `results[r]` is rank r's buffer after the collective; `input(r, buf)` regenerates rank r's
// input. Broadcast must reproduce the root's input exactly on every rank; reduce is checked
// at the root; allreduce on every rank. Reduce-scatter: rank r's chunk r of
// split_evenly(n, p) only (the rest of its buffer is scratch), against the reduction
// (bitwise_identical stays true: no two ranks hold the same result). Allgather: every rank
// must hold, exactly, chunk j of rank j's input in its chunk j, for every j (a rank's input
// counts only in its own chunk). Alltoall: rank r's block j must be rank j's block r, bit
// for bit (the elements past the p blocks stay rank r's own).
// Floating-point sums may differ from the reference by the usual rounding bound
// ((p-1) eps sum|x|, eps the type's epsilon: 2^-23 float32, 2^-52 float64, 2^-7 bfloat16,
// 2^-10 float16, which also allows (p-1) of its smallest subnormal), averages by that
// bound / p plus one rounding of the average, products by p eps |x| (+1%);
// min, max and integers must be exact (integer sums and products wrap around, in the
// reference too).
Verification verify_results(Collective collective, OpKind op, int root, const std::vector<Buffer>& results,
                            const InputFn& input);

// Folds one collective's check into a run's (several buckets or communicators): the largest
// error, the wrong elements, bit-identity, and the first failure, prefixed with `where` (e.g.
// "bucket 3"). checked_ranks stays the caller's to count.
void merge_verification(Verification& merged, const Verification& one, const std::string& where);

}  // namespace collsim
