#include <doctest/doctest.h>

#include "sim/verify.hpp"

using namespace collsim;

namespace {
// Rank r holds r+1 in every element.
void input(int rank, Buffer& b) {
  for (size_t i = 0; i < b.carried(); ++i) b.set(i, rank + 1);
}
std::vector<Buffer> filled(int p, size_t n, long double value) {
  std::vector<Buffer> out;
  for (int r = 0; r < p; ++r) {
    out.emplace_back(Dtype::float32, n);
    for (size_t i = 0; i < n; ++i) out.back().set(i, value);
  }
  return out;
}
}  // namespace

TEST_CASE("a correct allreduce verifies") {
  const auto v = verify_results(Collective::allreduce, OpKind::sum, 0, filled(4, 3, 10), input);
  CHECK(v.verified);
  CHECK(v.bitwise_identical);
  CHECK(v.max_error == 0);
  CHECK(v.checked_ranks == 4);
}

TEST_CASE("a wrong element fails verification and is named") {
  auto results = filled(4, 3, 10);
  results[2].set(1, 11);
  const auto v = verify_results(Collective::allreduce, OpKind::sum, 0, results, input);
  CHECK_FALSE(v.verified);
  CHECK_FALSE(v.bitwise_identical);
  CHECK(v.max_error == 1);
  CHECK(v.failure.find("rank 2 element 1") == 0);
  CHECK(v.wrong_elements == 1);
}

TEST_CASE("wrong_elements counts every element beyond its tolerance on every checked rank (nccl-tests' #wrong)") {
  // allreduce of 4 ranks holding 1..4: every element 10; float32 sums allow 3 x 2^-23 x 10
  auto results = filled(4, 5, 10);
  results[0].set(0, 9);
  results[0].set(4, 10.5L);
  results[3].set(2, 12);
  results[1].set(1, 10.000001L);  // within 3 roundings of float32: not wrong
  auto v = verify_results(Collective::allreduce, OpKind::sum, 0, results, input);
  CHECK(v.wrong_elements == 3);
  CHECK(v.tolerance == "3 additions x epsilon 2^-23 x sum|x|");
  // reduce checks the root only: rank 0's two wrong elements
  v = verify_results(Collective::reduce, OpKind::sum, 0, results, input);
  CHECK(v.wrong_elements == 2);
  // data that is only moved must be bit for bit
  v = verify_results(Collective::broadcast, OpKind::sum, 0, filled(3, 4, 1), input);
  CHECK(v.verified);
  CHECK(v.tolerance == "bit for bit");
  auto moved = filled(3, 4, 1);
  moved[1].set(0, 2);
  moved[2].set(3, 2);
  CHECK(verify_results(Collective::broadcast, OpKind::sum, 0, moved, input).wrong_elements == 2);
  CHECK(verify_results(Collective::allreduce, OpKind::max, 0, filled(2, 1, 2), input).tolerance == "exact");
}

TEST_CASE("ranks that hold the same wrong result bit for bit are each counted, the first named") {
  // Every rank's element 2 is 12 instead of 10: four wrong elements, rank 0 named first
  // (ranks identical to the root share its check; each still counts).
  auto results = filled(4, 3, 10);
  for (auto& result : results) result.set(2, 12);
  const auto v = verify_results(Collective::allreduce, OpKind::sum, 0, results, input);
  CHECK_FALSE(v.verified);
  CHECK(v.bitwise_identical);
  CHECK(v.wrong_elements == 4);
  CHECK(v.max_error == 2);
  CHECK(v.failure.find("rank 0 element 2: got 12, expected 10") == 0);
  CHECK(v.checked_ranks == 4);
  // The same with the root at rank 2 (a reduce's shape): ranks 0 and 1, identical to it, fail first.
  results[3].set(0, 11);
  const auto w = verify_results(Collective::allreduce, OpKind::sum, 2, results, input);
  CHECK(w.wrong_elements == 5);
  CHECK_FALSE(w.bitwise_identical);
  CHECK(w.failure.find("rank 0 element 2") == 0);
}

TEST_CASE("reduce checks only the root, broadcast needs the root's exact input") {
  auto results = filled(3, 2, 0);
  results[1] = filled(1, 2, 6)[0];
  CHECK(verify_results(Collective::reduce, OpKind::sum, 1, results, input).verified);
  CHECK_FALSE(verify_results(Collective::broadcast, OpKind::sum, 1, filled(3, 2, 2.001L), input).verified);
  CHECK(verify_results(Collective::broadcast, OpKind::sum, 1, filled(3, 2, 2), input).verified);
}

TEST_CASE("alltoall: rank r's block j is rank j's block r, the tail its own, one wrong element fails") {
  // 3 ranks of 7 elements: blocks of 2 at 0, 2, 4; element 6 is no block. Rank j's
  // element i is 10 j + i.
  auto input_of = [](int rank, Buffer& b) {
    for (size_t i = 0; i < b.carried(); ++i) b.set(i, 10 * rank + static_cast<int>(i));
  };
  std::vector<Buffer> results;
  for (int r = 0; r < 3; ++r) {
    results.emplace_back(Dtype::int32, 7);
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) results.back().set(static_cast<size_t>(2 * j + k), 10 * j + 2 * r + k);
    results.back().set(6, 10 * r + 6);
  }
  CHECK(verify_results(Collective::alltoall, OpKind::sum, 0, results, input_of).verified);
  results[1].set(6, 6);  // rank 0's tail, not rank 1's
  const auto v = verify_results(Collective::alltoall, OpKind::sum, 0, results, input_of);
  CHECK_FALSE(v.verified);
  CHECK(v.failure == "rank 1 element 6: got 6, expected 16 (rank 1's element 6)");
  CHECK(v.wrong_elements == 1);
  CHECK(v.tolerance == "bit for bit");
}
