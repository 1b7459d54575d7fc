#include "algorithms/partners.hpp"

#include "algorithms/chunks.hpp"
#include "algorithms/collective.hpp"

namespace collsim {
namespace {

void add_tree(const Tree& tree, RankPairs& pairs) {
  for (size_t v = 0; v < tree.parent.size(); ++v)
    if (tree.parent[v] >= 0) pairs.emplace_back(tree.parent[v], static_cast<int>(v));
}

}  // namespace

RankPairs ring_partners(int p, int, int) {
  RankPairs pairs;
  for (int r = 0; r < p; ++r) pairs.emplace_back(r, (r + 1) % p);
  return pairs;
}

RankPairs root_partners(int p, int root, int) {
  RankPairs pairs;
  for (int r = 0; r < p; ++r) pairs.emplace_back(root, r);
  return pairs;
}

RankPairs chain_partners(int p, int root, int) {
  RankPairs pairs;
  for (int i = 0; i + 1 < p; ++i) pairs.emplace_back((root + i) % p, (root + i + 1) % p);
  return pairs;
}

RankPairs binomial_partners(int p, int root, int) {
  RankPairs pairs;
  for (int relative = 1; relative < p; ++relative)
    pairs.emplace_back((relative - (relative & -relative) + root) % p, (relative + root) % p);
  return pairs;
}

RankPairs butterfly_partners(int p, int, int) {
  const PowerOfTwoFold fold = fold_to_power_of_two(p);
  RankPairs pairs;
  for (int i = 0; i < fold.rem; ++i) pairs.emplace_back(2 * i, 2 * i + 1);
  for (int mask = 1; mask < fold.pof2; mask <<= 1)
    for (int v = 0; v < fold.pof2; ++v)
      if ((v & mask) == 0) pairs.emplace_back(fold.old_rank(v), fold.old_rank(v | mask));
  return pairs;
}

RankPairs binary_tree_partners(int p, int root, int) {
  RankPairs pairs;
  if (p > 1) add_tree(schedule_binary_tree(p, root).trees.front(), pairs);
  return pairs;
}

RankPairs double_tree_partners(int p, int, int) {
  RankPairs pairs;
  if (p > 1)
    for (const Tree& tree : double_binary_tree(p)) add_tree(tree, pairs);
  return pairs;
}

RankPairs all_partners(int p, int, int) {
  RankPairs pairs;
  for (int a = 0; a < p; ++a)
    for (int b = a + 1; b < p; ++b) pairs.emplace_back(a, b);
  return pairs;
}

RankPairs server_partners(int p, int, int servers) {
  RankPairs pairs;
  for (int s = 0; s < servers_in_group(servers, p); ++s)
    for (int r = 0; r < p; ++r) pairs.emplace_back(s, r);
  return pairs;
}

RankPairs scatter_ring_partners(int p, int root, int servers) {
  RankPairs pairs = binomial_partners(p, root, servers);
  const RankPairs ring = ring_partners(p, root, servers);
  pairs.insert(pairs.end(), ring.begin(), ring.end());
  return pairs;
}

RankPairs ring_and_root_partners(int p, int root, int servers) {
  RankPairs pairs = ring_partners(p, root, servers);
  const RankPairs rooted = root_partners(p, root, servers);
  pairs.insert(pairs.end(), rooted.begin(), rooted.end());
  return pairs;
}

}  // namespace collsim
