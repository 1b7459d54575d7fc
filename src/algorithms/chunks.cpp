#include "algorithms/chunks.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace collsim {

std::vector<Chunk> split_evenly(size_t count, int parts) {
  std::vector<Chunk> chunks(static_cast<size_t>(parts));
  for (int i = 0; i < parts; ++i) chunks[static_cast<size_t>(i)] = even_chunk(count, parts, i);
  return chunks;
}

std::vector<Chunk> split_into_segments(size_t count, size_t segment) {
  segment = std::max<size_t>(segment, 1);
  std::vector<Chunk> segments;
  for (size_t offset = 0; offset < count; offset += segment) segments.push_back({offset, std::min(segment, count - offset)});
  if (segments.empty()) segments.push_back({0, 0});
  return segments;
}

Chunk span_of(const std::vector<Chunk>& chunks, int first, int n) {
  Chunk span{chunks[static_cast<size_t>(first)].offset, 0};
  for (int i = first; i < first + n; ++i) span.count += chunks[static_cast<size_t>(i)].count;
  return span;
}

int PowerOfTwoFold::position(int rank) const {
  if (members.empty()) return rank;
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i] == rank) return static_cast<int>(i);
  throw std::logic_error("PowerOfTwoFold: a rank outside its members");
}

PowerOfTwoFold fold_members(std::vector<int> members) {
  PowerOfTwoFold fold = fold_to_power_of_two(static_cast<int>(members.size()));
  if (fold.rem != 0) throw std::logic_error("fold_members: not a power of two of members");
  fold.members = std::move(members);
  return fold;
}

PowerOfTwoFold fold_to_power_of_two(int p) {
  PowerOfTwoFold fold;
  while (fold.pof2 * 2 <= p) fold.pof2 *= 2;
  fold.rem = p - fold.pof2;
  return fold;
}

std::vector<Chunk> PowerOfTwoFold::blocks(const std::vector<Chunk>& chunks) const {
  std::vector<Chunk> out(static_cast<size_t>(pof2));
  for (int i = 0; i < pof2; ++i) {
    const int old = old_rank(i);
    out[static_cast<size_t>(i)] = old < 2 * rem ? span_of(chunks, old - 1, 2) : chunks[static_cast<size_t>(old)];
  }
  return out;
}

namespace {

Tree empty_tree(int p, int root) {
  Tree tree;
  tree.root = root;
  tree.parent.assign(static_cast<size_t>(p), -1);
  tree.children.assign(static_cast<size_t>(p), {});
  return tree;
}

void link(Tree& tree, int parent, int child) {
  tree.parent[static_cast<size_t>(child)] = parent;
  tree.children[static_cast<size_t>(parent)].push_back(child);
}

// NCCL's btree parent of `rank` (ncclGetBtree): clear the lowest set bit and set the next
// one up, or only clear it when that is out of range. Rank 0 is the root.
int btree_parent(int p, int rank) {
  if (rank == 0) return -1;
  int bit = 1;
  while (!(bit & rank)) bit <<= 1;
  const int up = (rank ^ bit) | (bit << 1);
  return up < p ? up : rank ^ bit;
}

}  // namespace

Tree heap_tree(int p, int root) {
  Tree tree = empty_tree(p, root);
  for (int relative = 1; relative < p; ++relative)
    link(tree, (root + (relative - 1) / 2) % p, (root + relative) % p);
  return tree;
}

std::array<Tree, 2> double_binary_tree(int p) {
  // The second tree relabels the first: mirror (p even) or shift by one (p odd).
  auto relabel = [p](int r) { return p % 2 == 0 ? p - 1 - r : (r + 1) % p; };
  std::array<Tree, 2> trees{empty_tree(p, 0), empty_tree(p, relabel(0))};
  for (int r = 1; r < p; ++r) {
    const int up = btree_parent(p, r);
    link(trees[0], up, r);
    link(trees[1], relabel(up), relabel(r));
  }
  return trees;
}

int TreeSchedule::steps(const std::vector<size_t>& segments) const {
  int last = -1;
  for (size_t t = 0; t < trees.size(); ++t)
    for (size_t v = 0; v < trees[t].parent.size(); ++v)
      if (trees[t].parent[v] >= 0)
        last = std::max(last, first_step[t][v] + 2 * (static_cast<int>(segments[t]) - 1));
  return last + 1;
}

TreeSchedule schedule_binary_tree(int p, int root) {
  TreeSchedule schedule{{heap_tree(p, root)}, {std::vector<int>(static_cast<size_t>(p), -1)}};
  const Tree& tree = schedule.trees[0];
  std::vector<int>& step = schedule.first_step[0];
  // Heap order lists parents before children: the root's first child receives at step 0.
  for (int relative = 1; relative < p; ++relative) {
    const int v = (root + relative) % p;
    const int parent = tree.parent[static_cast<size_t>(v)];
    const int gap = relative % 2 == 1 ? 1 : 2;  // first or second child
    step[static_cast<size_t>(v)] = (parent == root ? -1 : step[static_cast<size_t>(parent)]) + gap;
  }
  return schedule;
}

TreeSchedule schedule_double_binary_tree(int p) {
  const auto trees = double_binary_tree(p);
  const auto n = static_cast<size_t>(p);
  // Nodes (t, v) for v not the root of tree t; node id t*p + v. Edges: "different parity".
  std::vector<std::vector<size_t>> differ(2 * n);
  auto must_differ = [&](size_t a, size_t b) {
    differ[a].push_back(b);
    differ[b].push_back(a);
  };
  for (size_t v = 0; v < n; ++v) {
    // a rank receives in both trees: on steps of different parity
    if (trees[0].parent[v] >= 0 && trees[1].parent[v] >= 0) must_differ(v, n + v);
    // a rank sends to at most two children over both trees: on steps of different parity
    std::vector<size_t> kids;
    for (size_t t = 0; t < 2; ++t)
      for (int c : trees[t].children[v]) kids.push_back(t * n + static_cast<size_t>(c));
    if (kids.size() > 2) throw std::logic_error("double binary tree: a rank with more than two children");
    if (kids.size() == 2) must_differ(kids[0], kids[1]);
  }
  // 2-colour every connected component, its first node (in id order) with parity 0.
  std::vector<int> parity(2 * n, -1), component(2 * n, -1);
  for (size_t start = 0; start < 2 * n; ++start) {
    if (parity[start] >= 0 || trees[start / n].parent[start % n] < 0) continue;
    parity[start] = 0;
    component[start] = static_cast<int>(start);
    std::vector<size_t> pending{start};
    while (!pending.empty()) {
      const size_t a = pending.back();
      pending.pop_back();
      for (size_t b : differ[a]) {
        if (parity[b] < 0) {
          parity[b] = 1 - parity[a];
          component[b] = component[a];
          pending.push_back(b);
        } else if (parity[b] == parity[a]) {
          throw std::logic_error("double binary tree: no single-port schedule (odd cycle)");
        }
      }
    }
  }
  // Start both trees on the same step when the roots' children can take the same parity.
  if (p > 1) {
    const size_t first = static_cast<size_t>(trees[0].children[static_cast<size_t>(trees[0].root)][0]);
    const size_t second = n + static_cast<size_t>(trees[1].children[static_cast<size_t>(trees[1].root)][0]);
    if (parity[first] != parity[second] && component[first] != component[second])
      for (size_t id = 0; id < 2 * n; ++id)
        if (component[id] == component[second]) parity[id] = 1 - parity[id];
  }
  // Each child one or two steps after its parent's receive, whichever has its parity; the
  // root's only child one step after the root's (virtual) receive.
  std::array<std::vector<int>, 2> step{std::vector<int>(n, 0), std::vector<int>(n, 0)};
  int earliest = p > 1 ? std::numeric_limits<int>::max() : 0;
  for (size_t t = 0; t < 2; ++t) {
    const Tree& tree = trees[t];
    const auto root = static_cast<size_t>(tree.root);
    if (p > 1) step[t][root] = -1 - parity[t * n + static_cast<size_t>(tree.children[root][0])];
    std::vector<int> order{tree.root};
    for (size_t i = 0; i < order.size(); ++i) {
      const auto u = static_cast<size_t>(order[i]);
      for (int c : tree.children[u]) {
        const auto child = static_cast<size_t>(c);
        const int gap = mod(step[t][u] + 1, 2) == parity[t * n + child] ? 1 : 2;
        step[t][child] = step[t][u] + gap;
        earliest = std::min(earliest, step[t][child]);
        order.push_back(c);
      }
    }
  }
  TreeSchedule schedule{{trees[0], trees[1]}, {std::vector<int>(n, -1), std::vector<int>(n, -1)}};
  for (size_t t = 0; t < 2; ++t)
    for (size_t v = 0; v < n; ++v)
      if (trees[t].parent[v] >= 0) schedule.first_step[t][v] = step[t][v] - earliest;
  return schedule;
}

}  // namespace collsim
