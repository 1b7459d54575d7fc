// Where logical elements lie among the carried ones (comm/buffer.hpp): the same span gives
// the same carried elements on every rank, spans that tile the vector tile its memory, a
// view stands for its logical elements, and scratch holds any part.
#include <doctest/doctest.h>

#include "algorithms/chunks.hpp"
#include "comm/buffer.hpp"

using namespace collsim;

TEST_CASE("a linear map: floor(x * carried / logical), the identity when all is carried") {
  const CarriedMap map{999, 1024, nullptr};
  CHECK(map.at(0) == 0);
  CHECK(map.at(256) == 249);  // 256 * 999 / 1024 = 249.75
  CHECK(map.at(1024) == 999);
  const CarriedMap dense{1024, 1024, nullptr};
  CHECK(dense.at(513) == 513);
}

TEST_CASE("views stand for their logical elements, chunks tile the carried ones") {
  Buffer buf(Dtype::float32, 999, 1024);
  CHECK(buf.size() == 1024);
  CHECK(buf.carried() == 999);
  size_t next = 0;
  for (const Chunk& c : split_evenly(buf.size(), 4)) {
    const View v = buf.view(c.offset, c.count);
    CHECK(v.logical == 256);
    CHECK(v.logical_bytes() == 1024.0);
    CHECK(v.data == buf.data() + next * 4);  // each chunk starts where the last one ended
    next += v.count;
  }
  CHECK(next == 999);
}

TEST_CASE("scratch holds any part of that many logical elements, shaped as the part") {
  Buffer buf(Dtype::float32, 1000, 4093);
  const size_t length = 1024;
  Buffer scratch = buf.scratch(length);
  size_t most = 0;
  for (size_t a = 0; a + length <= buf.size(); ++a) most = std::max(most, buf.view(a, length).count);
  CHECK(scratch.carried() >= most);
  const View part = buf.view(7, length);
  const View held = scratch.holding(part);
  CHECK(held.count == part.count);
  CHECK(held.logical == part.logical);
}

TEST_CASE("a piecewise map: each piece linear in its own share") {
  // pieces of 100 and 4 logical elements carried as 10 and 1
  auto starts = std::make_shared<std::vector<CarriedMap::Start>>(
      std::vector<CarriedMap::Start>{{0, 0}, {100, 10}});
  const CarriedMap map{11, 104, starts};
  CHECK(map.at(0) == 0);
  CHECK(map.at(99) == 9);
  CHECK(map.at(100) == 10);
  CHECK(map.at(103) == 10);
  CHECK(map.at(104) == 11);
  // any span of 4 holds at most the densest share (1 per 4) plus one per piece it may cross
  size_t most = 0;
  for (size_t a = 0; a + 4 <= 104; ++a) most = std::max(most, map.at(a + 4) - map.at(a));
  CHECK(map.room_for(4) >= most);
  // a buffer of it: the small piece's view holds its own element
  Buffer buf(Dtype::float32, map);
  CHECK(buf.view(100, 4).count == 1);
  CHECK(buf.slice(0, map).view(100, 4).count == 1);
}

TEST_CASE("alltoall's blocks are equal in carried elements too") {
  Buffer buf(Dtype::float32, 12, 1003);  // 4 blocks of 250 logical elements, 3 carried each
  for (int j = 0; j < 4; ++j) {
    const View block = buf.block(4, j);
    CHECK(block.count == 3);
    CHECK(block.logical == 250);
    CHECK(block.data == buf.data() + 3 * 4 * j);
  }
}
