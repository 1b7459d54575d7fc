#include <doctest/doctest.h>

#include "sim/verify.hpp"

using namespace collsim;

namespace {
// Rank r holds r+1 in every element.
void input(int rank, Buffer& b) {
  for (size_t i = 0; i < b.size(); ++i) b.set(i, rank + 1);
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
}

TEST_CASE("reduce checks only the root; broadcast needs the root's exact input") {
  auto results = filled(3, 2, 0);
  results[1] = filled(1, 2, 6)[0];
  CHECK(verify_results(Collective::reduce, OpKind::sum, 1, results, input).verified);
  CHECK_FALSE(verify_results(Collective::broadcast, OpKind::sum, 1, filled(3, 2, 2.001L), input).verified);
  CHECK(verify_results(Collective::broadcast, OpKind::sum, 1, filled(3, 2, 2), input).verified);
}
