#include <doctest/doctest.h>

#include <cmath>

#include "plan/payload.hpp"

using namespace collsim;

TEST_CASE("small payloads are carried whole") {
  const Payload p = plan_payload(4004, Dtype::float32, 7, std::nullopt);
  CHECK(p.carried_elems == 1001);
  CHECK(p.bytes_per_elem == 4);
  CHECK_FALSE(p.downscaled());
}

TEST_CASE("1 GiB at p=1024 is downscaled to a multiple of p that fits the budget") {
  const Payload p = plan_payload(1073741824.0, Dtype::float32, 1024, std::nullopt);
  CHECK(p.downscaled());
  CHECK(p.carried_elems % 1024 == 0);
  CHECK(p.carried_elems * 1024 <= carried_budget_elements);
  // every ring chunk stands for exactly n/p logical bytes
  CHECK(simulated_bytes(p.carried_elems / 1024, p.bytes_per_elem) == 1073741824ULL / 1024);
}

TEST_CASE("with k channels, a multiple of k p: every channel's chunk stands for n/(kp)") {
  const Payload p = plan_payload(1073741824.0, Dtype::float32, 1024, std::nullopt, 8);
  CHECK(p.carried_elems % (8 * 1024) == 0);
  CHECK(simulated_bytes(p.carried_elems / 8 / 1024, p.bytes_per_elem) == 1073741824ULL / 8 / 1024);
  // one channel: the plan of no channels
  CHECK(plan_payload(1073741824.0, Dtype::float32, 1024, std::nullopt, 1).carried_elems ==
        plan_payload(1073741824.0, Dtype::float32, 1024, std::nullopt).carried_elems);
}

TEST_CASE("the user can choose the carried count") {
  const Payload p = plan_payload(4000, Dtype::float32, 4, 100);
  CHECK(p.carried_elems == 100);
  CHECK(p.bytes_per_elem == 40);
}

TEST_CASE("the largest size at the largest p does not overflow the budget arithmetic") {
  // 2^50 bytes of float32 is 2^48 elements; times 10^6 ranks that would pass 2^64
  const Payload p = plan_payload(1125899906842624.0, Dtype::float32, 1'000'000, std::nullopt);
  // the budget (2^22) / p / p is 0, so one element per rank and chunk: p elements
  CHECK(p.carried_elems == 1'000'000);
  CHECK(p.logical_elems == (uint64_t{1} << 48));
}

TEST_CASE("an algorithm that holds a vector from every peer shares the budget among them") {
  // the direct allreduce at p = 256 holds 255 vectors per rank: 2^22 / 256 / 255 = 64 elements
  const Payload direct = plan_payload(1073741824.0, Dtype::float32, 256, std::nullopt, 1, 255);
  CHECK(direct.carried_elems == 64);
  CHECK(direct.carried_elems * 256 * 255 <= carried_budget_elements);
  CHECK(direct.bytes_per_elem * 64 == 1073741824.0);  // the whole vector still stands for 1 GiB
  // a small vector that fits the shared budget is carried whole: 2^22 / 64 / 63 = 1040
  CHECK(plan_payload(4000.0, Dtype::float32, 64, std::nullopt, 1, 63).carried_elems == 1000);
  CHECK(plan_payload(8000.0, Dtype::float32, 64, std::nullopt, 1, 63).carried_elems == 1040);
  // p = 4096: fewer elements than ranks is fine (no chunks), but never none
  CHECK(plan_payload(1073741824.0, Dtype::float32, 4096, std::nullopt, 1, 4095).carried_elems == 1);
  // one vector held: the plan of before
  CHECK(plan_payload(1073741824.0, Dtype::float32, 256, std::nullopt, 1, 1).carried_elems ==
        plan_payload(1073741824.0, Dtype::float32, 256, std::nullopt).carried_elems);
}

// simulated_bytes rounds without std::llround (twice per message): it must round exactly
// as llround does, ties away from zero, including the products just below a half.
TEST_CASE("simulated_bytes rounds as std::llround does") {
  const double just_below_half = std::nextafter(0.5, 0.0);
  CHECK(simulated_bytes(1, just_below_half) == static_cast<uint64_t>(std::llround(just_below_half)));
  CHECK(simulated_bytes(1, just_below_half) == 0);
  CHECK(simulated_bytes(1, 0.5) == 1);
  CHECK(simulated_bytes(3, 0.5) == 2);  // 1.5: away from zero, not to even
  CHECK(simulated_bytes(5, 0.5) == 3);
  CHECK(simulated_bytes(0, 123.25) == 0);
  // odd integers above 2^52, where adding 0.5 to round would itself round
  const double big = std::ldexp(1.0, 52) + 1;
  CHECK(simulated_bytes(1, big) == static_cast<uint64_t>(std::llround(big)));
  // a sweep of awkward products against the library
  for (size_t elems : {1UL, 3UL, 7UL, 1000UL, 1UL << 20, (1UL << 40) + 1})
    for (double per : {0.1, 0.3, 0.7, 1.0 / 3, 2.5, 4.0, 40.0, 1073741824.0 / 3000, 1e-9})
      CHECK(simulated_bytes(elems, per) == static_cast<uint64_t>(std::llround(static_cast<double>(elems) * per)));
}
