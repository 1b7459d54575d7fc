#include <doctest/doctest.h>

#include <algorithm>

#include "algorithms/partners.hpp"

using namespace collsim;

namespace {
// Pairs as a sorted list of unordered pairs, for comparing with hand-worked sets.
RankPairs normalised(RankPairs pairs) {
  for (auto& [a, b] : pairs)
    if (a > b) std::swap(a, b);
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}
}  // namespace

TEST_CASE("partners: binomial tree from root 2 over 6 ranks, parent = relative rank minus its lowest bit") {
  // relative 1..5 are ranks 3, 4, 5, 0, 1; their parents relative 0, 0, 2, 0, 4 = ranks 2, 2, 4, 2, 0
  CHECK(normalised(binomial_partners(6, 2, 1)) == RankPairs{{0, 1}, {0, 2}, {2, 3}, {2, 4}, {4, 5}});
}

TEST_CASE("partners: butterfly over 6 ranks folds 0-1 and 2-3, then swaps new ranks 1,3,4,5 at distance 1 and 2") {
  CHECK(normalised(butterfly_partners(6, 0, 1)) == RankPairs{{0, 1}, {1, 3}, {1, 4}, {2, 3}, {3, 5}, {4, 5}});
}

TEST_CASE("partners: chain from root 1 over 4 ranks, no wrap back to the root") {
  CHECK(normalised(chain_partners(4, 1, 1)) == RankPairs{{0, 3}, {1, 2}, {2, 3}});
}

TEST_CASE("partners: ring, root, servers and every pair") {
  CHECK(normalised(ring_partners(3, 0, 1)) == RankPairs{{0, 1}, {0, 2}, {1, 2}});
  CHECK(normalised(root_partners(4, 3, 1)) == RankPairs{{0, 3}, {1, 3}, {2, 3}, {3, 3}});
  CHECK(normalised(server_partners(3, 0, 2)) == RankPairs{{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}});
  CHECK(normalised(server_partners(3, 0, 9)).size() == 6);  // clamped to 3 servers: every pair and the diagonal
  CHECK(all_partners(5, 0, 1).size() == 10);
}

TEST_CASE("partners: a binary tree over 7 ranks has 6 edges, each rank but the root with its parent") {
  const RankPairs pairs = binary_tree_partners(7, 0, 1);
  CHECK(pairs.size() == 6);
  for (int r = 1; r < 7; ++r)
    CHECK(std::count_if(pairs.begin(), pairs.end(), [r](const auto& e) { return e.second == r; }) == 1);
}
