#include <doctest/doctest.h>

#include "plan/input_data.hpp"
#include "sim/bucket_data.hpp"

using namespace collsim;

namespace {
constexpr uint64_t seed = 7;

// Rank r's whole vector of n float64 inputs, as a run without buckets in flight holds it.
Buffer whole_input(int rank, size_t n) {
  Buffer whole(Dtype::float64, n);
  fill_input(whole, rank, OpKind::sum, seed);
  return whole;
}

// Each rank's result of the bucket [first, first + count): the sum over the ranks of their
// whole vectors' elements there, added in double by hand.
std::vector<Buffer> summed(int p, size_t n, size_t first, size_t count) {
  std::vector<Buffer> out(static_cast<size_t>(p), Buffer(Dtype::float64, count));
  for (int r = 0; r < p; ++r) {
    const Buffer in = whole_input(r, n);
    for (size_t i = 0; i < count; ++i)
      for (Buffer& result : out) result.set(i, result.get(i) + in.get(first + i));
  }
  return out;
}

BucketVerifier verifier(int p) {
  return BucketVerifier(p, OpKind::sum, [](int rank, Buffer& buf, size_t first) {
    fill_input(buf, rank, OpKind::sum, seed, first);
  });
}
}  // namespace

TEST_CASE("a part of the input made alone holds what the whole vector holds there") {
  for (const Dtype dtype : {Dtype::float32, Dtype::bfloat16, Dtype::int8}) {
    Buffer whole(dtype, 100);
    fill_input(whole, 3, OpKind::sum, seed);
    Buffer part(dtype, 30);
    fill_input(part, 3, OpKind::sum, seed, 40);
    for (size_t i = 0; i < 30; ++i) CHECK(part.get(i) == whole.get(40 + i));
  }
}

TEST_CASE("buckets handed over in any order verify once every rank has handed each over") {
  // two buckets of a 9-element vector: [0, 5) and [5, 9), three ranks
  auto verify = verifier(3);
  auto first = summed(3, 9, 0, 5), second = summed(3, 9, 5, 4);
  for (int r : {2, 0}) verify.deposit(1, 5, r, second[static_cast<size_t>(r)]);
  for (int r : {1, 2, 0}) verify.deposit(0, 0, r, first[static_cast<size_t>(r)]);
  verify.deposit(1, 5, 1, second[1]);
  const Verification v = verify.merged();
  CHECK(v.verified);
  CHECK(v.checked_ranks == 3);
  CHECK(v.bitwise_identical);
  CHECK(v.wrong_elements == 0);
}

TEST_CASE("a wrong element of a bucket fails the run and names the bucket") {
  auto verify = verifier(3);
  auto first = summed(3, 9, 0, 5), second = summed(3, 9, 5, 4);
  second[1].set(2, second[1].get(2) + 1);
  for (int r = 0; r < 3; ++r) {
    verify.deposit(0, 0, r, first[static_cast<size_t>(r)]);
    verify.deposit(1, 5, r, second[static_cast<size_t>(r)]);
  }
  const Verification v = verify.merged();
  CHECK_FALSE(v.verified);
  CHECK(v.failure.rfind("bucket 1: rank 1 element 2", 0) == 0);
  CHECK(v.wrong_elements == 1);
  CHECK(v.max_error == doctest::Approx(1));
}

TEST_CASE("a bucket some rank never handed over fails the run") {
  auto verify = verifier(3);
  auto first = summed(3, 9, 0, 5);
  for (int r : {0, 2}) verify.deposit(0, 0, r, first[static_cast<size_t>(r)]);
  const Verification v = verify.merged();
  CHECK_FALSE(v.verified);
  CHECK(v.failure == "bucket 0: 1 of 3 ranks never handed its result over");
}
