#include <doctest/doctest.h>

#include "algorithms/chunks.hpp"

using namespace collsim;

TEST_CASE("split_evenly: the first count % parts chunks get one more element") {
  const auto c = split_evenly(10, 4);
  REQUIRE(c.size() == 4);
  CHECK(c[0].count == 3);
  CHECK(c[1].count == 3);
  CHECK(c[2].count == 2);
  CHECK(c[3].count == 2);
  CHECK(c[3].offset == 8);
}

TEST_CASE("split_evenly: fewer elements than parts leaves empty chunks") {
  const auto c = split_evenly(2, 5);
  CHECK(c[0].count == 1);
  CHECK(c[1].count == 1);
  CHECK(c[2].count == 0);
  CHECK(c[4].offset == 2);
}

TEST_CASE("split_evenly covers every element exactly once") {
  for (size_t n : {0, 1, 7, 1000, 1001})
    for (int p : {1, 2, 3, 7, 33}) {
      CAPTURE(n);
      CAPTURE(p);
      size_t next = 0;
      for (const auto& chunk : split_evenly(n, p)) {
        CHECK(chunk.offset == next);
        next += chunk.count;
      }
      CHECK(next == n);
    }
}

TEST_CASE("even_chunk: one chunk of an even split without the list") {
  // 8197 elements in 8192 chunks: the first 5 hold 2 elements, the others 1
  CHECK(even_chunk(8197, 8192, 0).count == 2);
  CHECK(even_chunk(8197, 8192, 4).offset == 8);
  CHECK(even_chunk(8197, 8192, 4).count == 2);
  CHECK(even_chunk(8197, 8192, 5).offset == 10);
  CHECK(even_chunk(8197, 8192, 5).count == 1);
  CHECK(even_chunk(8197, 8192, 8191).offset == 8196);
  CHECK(even_chunk(8197, 8192, 8191).count == 1);
  CHECK(even_chunk(3, 8, 7).offset == 3);
  CHECK(even_chunk(3, 8, 7).count == 0);
}

TEST_CASE("split_into_segments") {
  const auto s = split_into_segments(10, 4);
  REQUIRE(s.size() == 3);
  CHECK(s[2].offset == 8);
  CHECK(s[2].count == 2);
  CHECK(split_into_segments(0, 4).size() == 1);
}

TEST_CASE("mod is Euclidean") {
  CHECK(mod(-1, 5) == 4);
  CHECK(mod(-6, 5) == 4);
  CHECK(mod(7, 5) == 2);
}
