#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <utility>

#include "algorithms/partners.hpp"
#include "recovery/order_search.hpp"

using namespace collsim;

namespace {
// Members 0..n-1 on a physical ring: pairing a with b costs their distance on it, and only
// the pair {slow_a, slow_b} crosses the slow link.
OrderSearch ring_of(int n, int slow_a, int slow_b) {
  OrderSearch search;
  search.crosses = [=](int a, int b) { return (a == slow_a && b == slow_b) || (a == slow_b && b == slow_a); };
  search.cost = [=](int a, int b) { return std::min(std::abs(a - b), n - std::abs(a - b)); };
  return search;
}

// The swaps alone stall; with the last resort an order of the same members is found, and
// none of its pairs crosses.
void check_only_the_last_resort_finds(const std::vector<int>& members, const RankPairs& pairs, OrderSearch search) {
  CHECK(order_avoiding(members, pairs, search).empty());
  search.last_resort = true;
  const std::vector<int> order = order_avoiding(members, pairs, search);
  REQUIRE(order.size() == members.size());
  CHECK(std::is_permutation(order.begin(), order.end(), members.begin()));
  for (auto [a, b] : pairs) CHECK_FALSE(search.crosses(order[static_cast<size_t>(a)], order[static_cast<size_t>(b)]));
}
}  // namespace

TEST_CASE("order search: an order that avoids the slow link already is left alone") {
  CHECK(order_avoiding({0, 1, 2, 3}, ring_partners(4, 0, 1), ring_of(4, 0, 2)).empty());
}

TEST_CASE("order search: a rooted algorithm is re-rooted by a rotation before any swap") {
  // root_partners pairs group rank 0 with every other: the root 0 meets 3 across the slow
  // link; rotated once, group rank 0 is member 1, whose pairs are 1-2, 1-3, 1-0.
  CHECK(order_avoiding({0, 1, 2, 3}, root_partners(4, 0, 1), ring_of(4, 0, 3)) == std::vector<int>{1, 2, 3, 0});
}

TEST_CASE("order search: a ring whose neighbours 2 and 3 share a slow link swaps two members, at the least extra cost") {
  // Every rotation keeps 2 next to 3. Worked by hand: each swap that parts them costs 2 more
  // (one unit pair becomes two pairs at distance 2); the first of them by position swaps
  // group ranks 1 and 2, giving pairs 0-2, 2-1, 1-3, 3-4, 4-5, 5-0.
  const std::vector<int> order = order_avoiding({0, 1, 2, 3, 4, 5}, ring_partners(6, 0, 1), ring_of(6, 2, 3));
  CHECK(order == std::vector<int>{0, 2, 1, 3, 4, 5});
}

TEST_CASE("order search: the members of a found order are the group's, and no pair crosses") {
  // 16 members, a butterfly's pairs (recursive doubling), a slow link between 5 and 4.
  std::vector<int> members(16);
  for (int i = 0; i < 16; ++i) members[static_cast<size_t>(i)] = 100 + i;
  const OrderSearch search = ring_of(16 + 100, 105, 104);
  const RankPairs pairs = butterfly_partners(16, 0, 1);
  const std::vector<int> order = order_avoiding(members, pairs, search);
  REQUIRE(order.size() == members.size());
  CHECK(std::is_permutation(order.begin(), order.end(), members.begin()));
  for (auto [a, b] : pairs) CHECK_FALSE(search.crosses(order[static_cast<size_t>(a)], order[static_cast<size_t>(b)]));
}

TEST_CASE("order search: when every pair of a member crosses the link, no order avoids it") {
  OrderSearch search;
  search.crosses = [](int a, int b) { return a == 0 || b == 0; };
  search.cost = [](int, int) { return 1; };
  CHECK(order_avoiding({0, 1, 2, 3, 4}, ring_partners(5, 0, 1), search).empty());
}

TEST_CASE("order search: a joiner takes the first place, its neighbour's first, where no pair crosses") {
  // Joiner 3 after 2 (the member below it) would pair 2 with 3 across the slow link; the
  // places are then tried from 0: at 0 the ring is 3-0, 0-1, 1-2, 2-4, 4-5, 5-3.
  CHECK(order_with({0, 1, 2, 4, 5}, 3, 3, ring_partners(6, 0, 1), ring_of(6, 2, 3)) ==
        std::vector<int>{3, 0, 1, 2, 4, 5});
}

TEST_CASE("order search: a joiner that crosses wherever it goes takes the place where the fewest pairs do") {
  // Joiner 2 crosses with every member but 0: next to 1 and 3 (its first try) two pairs
  // cross; at place 0 (between 4 and 0, the ring closing) one does, and no place has none.
  OrderSearch search = ring_of(5, -1, -1);
  search.crosses = [](int a, int b) { return (a == 2 || b == 2) && a + b != 2; };
  CHECK(order_with({0, 1, 3, 4}, 2, 2, ring_partners(5, 0, 1), search) == std::vector<int>{2, 0, 1, 3, 4});
}

TEST_CASE("order search: where no swap removes a crossing pair, a search of the orders finds one that avoids the link") {
  // torus:4x2 with the link between 2 and 3 down, both halves (x first; a tie goes the way
  // that does not wrap): the routes from 1 and 2 to 3 and 7 cross it, and those from 3 to
  // 1, 2, 5 and 6. So 3 may pair only with 0, 4 and 7, and 7 not with 1 or 2. The double
  // binary tree of 8 (node degrees up to 3 in each tree) has such orders (464 of the 40,320,
  // counted by brute force), and a swap search from 0..7 stalls before it.
  OrderSearch search;
  search.crosses = [](int a, int b) {
    auto one_way = [](int from, int to) { return ((from == 1 || from == 2) && (to == 3 || to == 7)) || (from == 3 && (to == 1 || to == 2 || to == 5 || to == 6)); };
    return one_way(a, b) || one_way(b, a);
  };
  search.cost = [](int, int) { return 1; };
  const std::vector<int> members{0, 1, 2, 3, 4, 5, 6, 7};
  const RankPairs pairs = double_tree_partners(8, 0, 1);
  check_only_the_last_resort_finds(members, pairs, search);
}

namespace {
// The hops of the route from `src` to `dst` on a SimGrid 3.32 torus (TorusZone): dimension
// by dimension, x first (rank = x + X y + X Y z), the shorter way round; on a tie up (+) when
// the target is within half the dimension above, or the source is past the middle and the
// target within half of it, wrapping; otherwise down. (tests/cli torus_hops, the same rule.)
std::vector<std::pair<int, int>> torus_hops(int src, int dst, const std::array<int, 3>& dims) {
  std::array<int, 3> here{src % dims[0], src / dims[0] % dims[1], src / (dims[0] * dims[1])};
  const std::array<int, 3> target{dst % dims[0], dst / dims[0] % dims[1], dst / (dims[0] * dims[1])};
  std::vector<std::pair<int, int>> hops;
  int at = src;
  for (size_t d = 0; d < 3; ++d) {
    const int mine = here[d], theirs = target[d], size = dims[d], half = size / 2;
    const bool up = (mine < theirs && theirs <= mine + half) || (mine > half && (mine + half) % size >= theirs);
    while (here[d] != target[d]) {
      here[d] = (here[d] + (up ? 1 : size - 1)) % size;
      const int next = here[0] + dims[0] * here[1] + dims[0] * dims[1] * here[2];
      hops.emplace_back(at, next);
      at = next;
    }
  }
  return hops;
}
}  // namespace

TEST_CASE("order search: the place search fills the most constrained places first (recursive doubling, torus:8x8x4)") {
  // The link between hosts 8 and 72 slow both ways, recursive doubling at p = 256: 8 and 72
  // must sit where no butterfly partner's route crosses it either way. No swap removes the
  // last crossing pairs (72's partners must all move together), and filling the places in a
  // fixed order gave up after 200,000 tries (72 was dropped, healthy). Filling next the
  // place with the fewest members left, and going back as soon as a place or a member has
  // none, finds an order.
  const std::array<int, 3> dims{8, 8, 4};
  OrderSearch search;
  search.crosses = [&](int a, int b) {
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}})
      for (auto hop : torus_hops(from, to, dims))
        if (hop == std::pair{8, 72} || hop == std::pair{72, 8}) return true;
    return false;
  };
  search.cost = [&](int a, int b) { return static_cast<int>(torus_hops(a, b, dims).size()); };
  std::vector<int> members(256);
  for (int i = 0; i < 256; ++i) members[static_cast<size_t>(i)] = i;
  const RankPairs pairs = butterfly_partners(256, 0, 1);
  check_only_the_last_resort_finds(members, pairs, search);
}

TEST_CASE("order search: two sides joined by one link, no order of a ring avoids it, found without a search of the orders") {
  // Members 0-15 in two racks of 8 (0-7, 8-15); a pair crosses the link between the racks
  // iff its members are in different racks. A ring's pairs connect every position, so every
  // order crosses it at least twice. The answer comes from the sides alone: at most the
  // rotations' 16 x 16 pair checks and the 120 pairs of members, not 200,000 tries.
  long checks = 0;
  OrderSearch search;
  search.crosses = [&checks](int a, int b) {
    ++checks;
    return (a < 8) != (b < 8);
  };
  search.cost = [](int a, int b) { return std::abs(a - b); };
  search.last_resort = true;
  std::vector<int> members(16);
  for (int i = 0; i < 16; ++i) members[static_cast<size_t>(i)] = i;
  CHECK(order_avoiding(members, ring_partners(16, 0, 1), search).empty());
  CHECK(checks <= 16 + 16 * 16 + 120);
  // With a third rack, 16-23, joined to both by other links (its pairs clean), the sides
  // connect, and an order exists: 0-7, then 16-19, 8-15, 20-23.
  search.crosses = [](int a, int b) { return (a < 8 && b >= 8 && b < 16) || (b < 8 && a >= 8 && a < 16); };
  std::vector<int> three(24);
  for (int i = 0; i < 24; ++i) three[static_cast<size_t>(i)] = i;
  const RankPairs ring = ring_partners(24, 0, 1);
  const std::vector<int> order = order_avoiding(three, ring, search);
  REQUIRE(order.size() == 24);
  for (auto [a, b] : ring) CHECK_FALSE(search.crosses(order[static_cast<size_t>(a)], order[static_cast<size_t>(b)]));
}

TEST_CASE("order search: reversals keep a ring's blocks together where swaps part them") {
  // 16 members on 4 routers of 4 (member m on router m / 4), the link between routers 1 and
  // 2 slow: a pair crosses it when its members are on routers 1 and 2; pairing two members
  // costs 1 between routers, 0 on one. The ring's 4 router changes cost 4. Worked by hand:
  // the first reversal that parts 7 from 8 without a cost is that of positions 0-7 (the
  // ring's pairs become 15-7 and 0-8, routers 3-1 and 0-2; inside, the same neighbours).
  OrderSearch search;
  search.crosses = [](int a, int b) { return (a / 4 == 1 && b / 4 == 2) || (a / 4 == 2 && b / 4 == 1); };
  search.cost = [](int a, int b) { return a / 4 == b / 4 ? 0 : 1; };
  std::vector<int> members(16);
  for (int i = 0; i < 16; ++i) members[static_cast<size_t>(i)] = i;
  const RankPairs pairs = ring_partners(16, 0, 1);
  auto cost_of = [&](const std::vector<int>& order) {
    int total = 0;
    for (auto [a, b] : pairs) total += search.cost(order[static_cast<size_t>(a)], order[static_cast<size_t>(b)]);
    return total;
  };
  const std::vector<int> reversed = order_by_reversals(members, pairs, search);
  CHECK(reversed == std::vector<int>{7, 6, 5, 4, 3, 2, 1, 0, 8, 9, 10, 11, 12, 13, 14, 15});
  CHECK(cost_of(reversed) == 4);
  // A swap puts a member among another router's: more pairs between routers (sharing their links).
  const std::vector<int> swapped = order_avoiding(members, pairs, search);
  REQUIRE(swapped.size() == 16);
  CHECK(cost_of(swapped) > 4);
  // An algorithm with more than two pairs a member (recursive doubling) is left to the swaps.
  CHECK(order_by_reversals(members, butterfly_partners(16, 0, 1), search).empty());
}

namespace {
// Pairs like a hierarchical allreduce's over `groups` groups of `size` places in a row: a
// ring inside each group, and place i of each group with place i of the next group.
RankPairs grouped_pairs(int groups, int size) {
  RankPairs pairs;
  for (int g = 0; g < groups; ++g)
    for (int i = 0; i < size; ++i) {
      if (size > 1) pairs.emplace_back(g * size + i, g * size + (i + 1) % size);
      pairs.emplace_back(g * size + i, ((g + 1) % groups) * size + i);
    }
  return pairs;
}

// Every place of `order` holds a member of the class its member in `members` had.
void check_groups_kept(const std::vector<int>& members, const std::vector<int>& order, const OrderSearch& search) {
  REQUIRE(order.size() == members.size());
  for (size_t place = 0; place < order.size(); ++place) {
    const auto member = static_cast<size_t>(std::find(members.begin(), members.end(), order[place]) - members.begin());
    CHECK(search.classes[member] == search.classes[place]);
  }
}
}  // namespace

TEST_CASE("order search: with classes, members trade places only inside their group (a leader choice)") {
  // Two groups of three (members 0-2, 3-5), the slow link only between members 0 and 3,
  // which the pair of place 0 with place 3 crosses. Worked by hand: the swaps of place 0
  // are tried first, with place 1 then 2 of its own group (3, 4, 5 are another group's);
  // 0 <-> 1 takes the crossing away (pairs 1-3, 0-4, 2-5 across), the first of the best.
  OrderSearch search = ring_of(6, 0, 3);
  search.cost = [](int, int) { return 1; };
  search.classes = {0, 0, 0, 1, 1, 1};
  const std::vector<int> members{0, 1, 2, 3, 4, 5};
  const std::vector<int> order = order_avoiding(members, grouped_pairs(2, 3), search);
  CHECK(order == std::vector<int>{1, 0, 2, 3, 4, 5});
  check_groups_kept(members, order, search);
}

TEST_CASE("order search: with classes, no place outside its group is taken even when only that would avoid the link") {
  // Member 0 crosses with every member of the other group: whatever leads, place 0's
  // partner across is one of them. Without classes the search could take 0 out of its
  // group; with them there is no order.
  OrderSearch search;
  search.crosses = [](int a, int b) { return (a == 0 && b >= 3) || (b == 0 && a >= 3); };
  search.cost = [](int, int) { return 1; };
  search.classes = {0, 0, 0, 1, 1, 1};
  search.last_resort = true;
  CHECK(order_avoiding({0, 1, 2, 3, 4, 5}, grouped_pairs(2, 3), search).empty());
}

TEST_CASE("order search: groups that may not be neighbours move as wholes (the ring across the groups)") {
  // Four groups of two (members 0-1, 2-3, 4-5, 6-7), every route between groups 0 and 1
  // across the slow link: no swap inside a group helps, the groups' order must change.
  // Worked by hand, the groups' ring 0-1-2-3: no rotation parts 0 and 1; the swaps of slot
  // 0 come first: with slot 1 or 2 a pair 0-1 stays, with slot 3 none (3-1, 1-2, 2-0, 0-3).
  OrderSearch search;
  search.crosses = [](int a, int b) { return (a / 2 == 0 && b / 2 == 1) || (a / 2 == 1 && b / 2 == 0); };
  search.cost = [](int, int) { return 1; };
  search.classes = {0, 0, 1, 1, 2, 2, 3, 3};
  const std::vector<int> members{0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<int> order = order_avoiding(members, grouped_pairs(4, 2), search);
  CHECK(order == std::vector<int>{6, 7, 2, 3, 4, 5, 0, 1});
  CHECK(order_by_groups(members, grouped_pairs(4, 2), search) == order);
  // Three groups in a ring are all neighbours: no order of groups avoids it.
  search.classes = {0, 0, 1, 1, 2, 2};
  CHECK(order_by_groups({0, 1, 2, 3, 4, 5}, grouped_pairs(3, 2), search).empty());
}
