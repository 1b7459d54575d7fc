#include <doctest/doctest.h>

#include <algorithm>
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
  CHECK(p.bytes_per_elem * static_cast<double>(p.carried_elems) == 1073741824.0);
}

TEST_CASE("with k channels, a multiple of k p: every channel's chunk stands for n/(kp)") {
  const Payload p = plan_payload(1073741824.0, Dtype::float32, 1024, std::nullopt, 8);
  CHECK(p.carried_elems % (8 * 1024) == 0);

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
  // the budget (2^20) / p / p is 0, so one element per rank and chunk: p elements, and one
  // more, as chunks of 2^48 / 10^6 = 281474976.7 elements hold a carried element each only
  // when each carried element stands for at most 281474976 of them
  CHECK(p.carried_elems == 1'000'001);
  CHECK(p.logical_elems == (uint64_t{1} << 48));
}

TEST_CASE("an algorithm that holds a vector from every peer shares the budget among them") {
  // the direct allreduce at p = 256 holds 255 vectors per rank: 2^20 / 256 / 255 = 16 elements
  const Payload direct = plan_payload(1073741824.0, Dtype::float32, 256, std::nullopt, 1, 255);
  CHECK(direct.carried_elems == 16);
  CHECK(direct.carried_elems * 256 * 255 <= carried_budget_elements);
  CHECK(direct.bytes_per_elem * 16 == 1073741824.0);  // the whole vector still stands for 1 GiB
  // a small vector that fits the shared budget is carried whole: 2^20 / 64 / 63 = 260
  CHECK(plan_payload(1000.0, Dtype::float32, 64, std::nullopt, 1, 63).carried_elems == 250);
  CHECK(plan_payload(2000.0, Dtype::float32, 64, std::nullopt, 1, 63).carried_elems == 260);
  // p = 4096: fewer elements than ranks is fine (no chunks), but never none
  CHECK(plan_payload(1073741824.0, Dtype::float32, 4096, std::nullopt, 1, 4095).carried_elems == 1);
  // one vector held: the plan of before
  CHECK(plan_payload(1073741824.0, Dtype::float32, 256, std::nullopt, 1, 1).carried_elems ==
        plan_payload(1073741824.0, Dtype::float32, 256, std::nullopt).carried_elems);
}


TEST_CASE("every chunk gets an element: one more than p when p does not divide the elements") {
  // 10 elements in 4 chunks of 2 or 3: 3 carried elements would leave a chunk of 2 without
  // one (floor(x * 3 / 10) maps [0, 3) [3, 6) [6, 8) [8, 10) to 0, 1, 1 and 2: chunk 2 gets
  // [1, 1)); 5 = ceil(10 / 2) give each chunk at least one
  CHECK(carried_to_represent(10, 4) == 5);
  CHECK(carried_to_represent(1024, 4) == 4);  // chunks of 256: 4 elements, one each
  CHECK(carried_to_represent(3, 4) == 3);     // chunks of under one element: carry them all
  for (uint64_t logical : {10ULL, 97ULL, 1000ULL, 1000003ULL})
    for (uint64_t chunks : {1ULL, 3ULL, 4ULL, 7ULL, 64ULL}) {
      CAPTURE(logical);
      CAPTURE(chunks);
      const CarriedMap map{carried_to_represent(logical, chunks), logical, nullptr};
      for (uint64_t c = 0; c < chunks; ++c) {
        const uint64_t base = logical / chunks, extra = logical % chunks;
        const uint64_t first = c * base + std::min(c, extra), count = base + (c < extra ? 1 : 0);
        if (count > 0) CHECK(map.at(first + count) > map.at(first));
      }
    }
}

TEST_CASE("buckets of layers: every layer and every chunk carries an element, at the budget's density") {
  // a layer of 4 parameters among 6 Mi still gets one
  const Payload tiny = plan_payload(4.0 * ((6 << 20) + 4), Dtype::float32, 16, std::nullopt, 1, 1,
                                    {{6 << 20, 4}});
  CHECK(tiny.piece_carried[0][1] == 1);
  // 16 ranks, 2 buckets: 3 layers of 1 Mi and one of 64 parameters; 1 Mi and 2 Mi
  const std::vector<std::vector<uint64_t>> parts{{1 << 20, 1 << 20, 1 << 20, 64}, {1 << 20, 2 << 20}};
  const double bytes = 4.0 * ((6 << 20) + 64);
  const Payload p = plan_payload(bytes, Dtype::float32, 16, std::nullopt, 1, 1, parts);
  REQUIRE(p.piece_carried.size() == 2);
  // the budget's density: (2^20 / 16) / (6 Mi + 64) elements per logical element; the
  // small layer gets ceil(64 x 0.0104) = 1 element of its own
  const double density = static_cast<double>(carried_budget_elements / 16) / ((6 << 20) + 64);
  CHECK(p.piece_carried[0].back() == 1);
  CHECK(p.piece_carried[0][0] == static_cast<uint64_t>(std::ceil((1 << 20) * density)));
  CHECK(p.piece_carried[1][1] == static_cast<uint64_t>(std::ceil((2 << 20) * density)));
  CHECK(p.part_carried[0] == p.piece_carried[0][0] * 3 + 1);
  CHECK(p.carried_elems == p.part_carried[0] + p.part_carried[1]);
  // every chunk of 16 in each bucket holds a carried element under the bucket's map
  for (size_t b = 0; b < 2; ++b) {
    const CarriedMap map = p.part_map(b);
    for (uint64_t c = 0; c < 16; ++c) {
      const uint64_t first = c * (map.logical / 16) + std::min(c, map.logical % 16);
      const uint64_t count = map.logical / 16 + (c < map.logical % 16 ? 1 : 0);
      CHECK(map.at(first + count) > map.at(first));
    }
  }
}

TEST_CASE("a bucket of many layers at large p: the chunks' density, not the budget's") {
  // p = 4096: the budget allows 1024 elements a rank, 1 per 4096 of the 64 layers of 64 Ki
  // (16 each); the 4096 chunks of 1024 elements need 2 per 1024: 128 a layer
  const std::vector<std::vector<uint64_t>> parts{std::vector<uint64_t>(64, 65536)};
  const Payload p = plan_payload(4.0 * 64 * 65536, Dtype::float32, 4096, std::nullopt, 1, 1, parts);
  for (uint64_t carried : p.piece_carried[0]) CHECK(carried == 128);
  const CarriedMap map = p.part_map(0);
  for (uint64_t c = 0; c < 4096; ++c) CHECK(map.at((c + 1) * 1024) > map.at(c * 1024));
}

TEST_CASE("a user's count is shared among buckets and layers in proportion") {
  const std::vector<std::vector<uint64_t>> parts{{300, 100}, {600}};
  const Payload p = plan_payload(4000.0, Dtype::float32, 4, 100, 1, 1, parts);
  CHECK(p.piece_carried == std::vector<std::vector<uint64_t>>{{30, 10}, {60}});
  CHECK(p.carried_elems == 100);
}
