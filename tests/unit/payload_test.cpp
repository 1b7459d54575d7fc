#include <doctest/doctest.h>

#include "sim/payload.hpp"

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

TEST_CASE("the user can choose the carried count") {
  const Payload p = plan_payload(4000, Dtype::float32, 4, 100);
  CHECK(p.carried_elems == 100);
  CHECK(p.bytes_per_elem == 40);
}
