// The hierarchical allreduce's arithmetic: groups by locality id, blocks, and the pieces
// (with their owners) that equal or unequal groups allreduce with each other.
#include <doctest/doctest.h>

#include "algorithms/hierarchy.hpp"

using namespace collsim;

namespace {
using Groups = std::vector<std::vector<int>>;
}

TEST_CASE("locality groups: ranks sharing an id, in rank order, groups by lowest rank") {
  CHECK(locality_groups({7, 3, 7, 3, 5}) == Groups{{0, 2}, {1, 3}, {4}});
  CHECK(locality_groups({0, 0, 0}) == Groups{{0, 1, 2}});
  CHECK(locality_groups({}).empty());
}

TEST_CASE("blocks of consecutive ranks: the last holds the rest") {
  CHECK(block_sizes(8, 3) == std::vector<int>{3, 3, 2});
  CHECK(block_sizes(8, 4) == std::vector<int>{4, 4});
  CHECK(block_sizes(8, 20) == std::vector<int>{8});
  CHECK(block_sizes(5, 1) == std::vector<int>{1, 1, 1, 1, 1});
  CHECK(consecutive_groups({2, 1, 3}) == Groups{{0, 1}, {2}, {3, 4, 5}});
}

TEST_CASE("equal groups: the pieces are the groups' chunks, owned by the members of one local index") {
  // 2 groups of 3 ranks, 12 elements: chunks of 4
  const HierarchyPlan plan = plan_hierarchy({{0, 1, 2}, {3, 4, 5}}, 12);
  CHECK(plan.even());
  REQUIRE(plan.pieces.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(plan.pieces[i].span.offset == static_cast<size_t>(4 * i));
    CHECK(plan.pieces[i].span.count == 4);
    CHECK(plan.pieces[i].owners == std::vector<int>{i, 3 + i});
  }
  CHECK(plan.place(4).group == 1);
  CHECK(plan.place(4).local == 1);
}

TEST_CASE("unequal groups: pieces cut at every group's chunk boundaries") {
  // groups of 3 and 2 over 12 elements: cuts at 4, 8 (thirds) and 6 (halves)
  const HierarchyPlan plan = plan_hierarchy({{0, 2, 4}, {1, 3}}, 12);
  CHECK_FALSE(plan.even());
  REQUIRE(plan.pieces.size() == 4);
  const size_t offsets[] = {0, 4, 6, 8}, counts[] = {4, 2, 2, 4};
  const std::vector<int> owners[] = {{0, 1}, {2, 1}, {2, 3}, {4, 3}};
  for (size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(plan.pieces[i].span.offset == offsets[i]);
    CHECK(plan.pieces[i].span.count == counts[i]);
    CHECK(plan.pieces[i].owners == owners[i]);
  }
}

TEST_CASE("fewer elements than ranks in a group: empty chunks own no piece") {
  // 2 elements, groups of 3: chunks 1, 1, 0
  const HierarchyPlan plan = plan_hierarchy({{0, 1, 2}, {3, 4, 5}}, 2);
  REQUIRE(plan.pieces.size() == 2);
  CHECK(plan.pieces[1].owners == std::vector<int>{1, 4});
  // a single group: one piece per non-empty chunk, each owned by one rank
  CHECK(plan_hierarchy({{0, 1, 2, 3}}, 10).pieces.size() == 4);
}
