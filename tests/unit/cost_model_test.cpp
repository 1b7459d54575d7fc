// Formulas checked against hand-worked numbers (alpha = 1 us, B = 1 GB/s, 4-byte elements).
#include <doctest/doctest.h>

#include "model/cost_model.hpp"

using namespace collsim;

namespace {
ModelInput input(int p, size_t elems) {
  ModelInput in;
  in.p = p;
  in.alpha = 1e-6;
  in.bandwidth = 1e9;
  in.elems = elems;
  in.bytes_per_elem = 4;
  in.segment_elems = elems;
  return in;
}
}  // namespace

TEST_CASE("ring allreduce: 2(p-1) steps of alpha + n/(pB)") {
  // p=4, n=4000 B: 6 * (1us + 1000 B / 1 GB/s = 1 us) = 12 us
  CHECK(model_allreduce_ring(input(4, 1000)) == doctest::Approx(12e-6));
  // uneven: 1001 elements -> largest chunk 251 elements = 1004 B
  CHECK(model_allreduce_ring(input(4, 1001)) == doctest::Approx(6 * (1e-6 + 1004e-9)));
  CHECK(model_allreduce_ring(input(1, 1000)) == 0);
}

TEST_CASE("naive allreduce grows with p; binomial with log p") {
  // 2 * (1us + 3 * 4us) = 26 us
  CHECK(model_allreduce_naive(input(4, 1000)) == doctest::Approx(26e-6));
  // 2 * 3 rounds * (1us + 4us) = 30 us for p=5
  CHECK(model_allreduce_naive_binomial(input(5, 1000)) == doctest::Approx(30e-6));
}

TEST_CASE("pipeline broadcast: p-1 + k-1 steps") {
  ModelInput in = input(4, 1000);
  in.segment_elems = 250;  // k = 4 segments of 1000 B: (3 + 3) * (1us + 1us) = 12 us
  CHECK(model_broadcast_pipeline(in) == doctest::Approx(12e-6));
  in.segment_elems = 300;  // 300,300,300,100: 5 * 2.2us + (1us + 0.4us) = 12.4 us
  CHECK(model_broadcast_pipeline(in) == doctest::Approx(12.4e-6));
}

TEST_CASE("lower bounds and bus bandwidth factors") {
  const LowerBound b = lower_bound(Collective::allreduce, input(4, 1000));
  CHECK(b.bandwidth_term == doctest::Approx(2.0 * 3 / 4 * 4e-6));
  CHECK(b.latency_term == doctest::Approx(2e-6));
  CHECK(b.value() == doctest::Approx(6e-6));
  CHECK(lower_bound(Collective::broadcast, input(5, 1000)).latency_term == doctest::Approx(3e-6));
  CHECK(busbw_factor(Collective::allreduce, 8) == doctest::Approx(1.75));
  CHECK(busbw_factor(Collective::broadcast, 8) == 1);
  CHECK(ceil_log2(1) == 0);
  CHECK(ceil_log2(5) == 3);
  CHECK(ceil_log2(64) == 6);
}
