#pragma once
// The arithmetic several algorithms share: contiguous pieces of a vector (ring chunks,
// pipeline segments), the fold of recursive algorithms onto a power of two, and the
// trees of the pipelined tree algorithms with their step schedule.
#include <array>
#include <bit>
#include <cstddef>
#include <vector>

namespace collsim {

struct Chunk {
  size_t offset = 0;
  size_t count = 0;
};

// `parts` chunks covering [0, count): the first count % parts chunks hold one element
// more than the others. Chunks are empty when count < parts.
std::vector<Chunk> split_evenly(size_t count, int parts);
// Chunk `index` of split_evenly(count, parts) without the list: a rank that keeps a list of
// p chunks makes p^2 of them over the run (1 GiB at p = 8192).
// Inline: a ring asks it twice per step.
inline Chunk even_chunk(size_t count, int parts, int index) {
  const size_t base = count / static_cast<size_t>(parts);
  const size_t extra = count % static_cast<size_t>(parts);
  const auto i = static_cast<size_t>(index);
  return {i * base + (i < extra ? i : extra), base + (i < extra ? 1 : 0)};
}

// Consecutive segments of at most `segment` elements; always at least one (maybe empty).
std::vector<Chunk> split_into_segments(size_t count, size_t segment);

// The chunk covering chunks[first] .. chunks[first + n - 1] (consecutive chunks).
Chunk span_of(const std::vector<Chunk>& chunks, int first, int n);

// The elements of chunks first .. first + n - 1 in O(1) (prefix sums): the schedules ask
// for p spans per step, each up to p/2 chunks long.
class ChunkSpans {
public:
  explicit ChunkSpans(const std::vector<Chunk>& chunks) : before_(chunks.size() + 1, 0) {
    for (size_t i = 0; i < chunks.size(); ++i) before_[i + 1] = before_[i] + chunks[i].count;
  }
  size_t count(int first, int n) const {
    return before_[static_cast<size_t>(first + n)] - before_[static_cast<size_t>(first)];
  }

private:
  std::vector<size_t> before_;
};

// Euclidean remainder: ring arithmetic with negative steps.
inline int mod(int a, int m) { return ((a % m) + m) % m; }

// The rounds of a binomial tree over p ranks: the least k with 2^k >= p (0 for p <= 1).
inline int ceil_log2(int p) { return p <= 1 ? 0 : std::bit_width(static_cast<unsigned>(p - 1)); }

// The standard fold of recursive halving and doubling when p is not a power of two
// (MPICH; Thakur, Rabenseifner & Gropp 2005): among the first 2 rem ranks, each even rank
// hands its data to the odd rank above it and sits out; the pof2 ranks left are
// renumbered 0 .. pof2-1 (odd rank 2i+1 becomes i, rank r >= 2 rem becomes r - rem).
struct PowerOfTwoFold {
  int pof2 = 1;  // the largest power of two <= p
  int rem = 0;   // p - pof2
  // Over some ranks of the group only (fold_members): their ranks, position i standing for
  // rank members[i]; empty: the whole group, position r for rank r.
  std::vector<int> members;

  // The rank's number among the pof2 ranks left, or -1 for an even rank below 2 rem.
  int new_rank(int rank) const {
    const int r = position(rank);
    return r < 2 * rem ? (r % 2 == 1 ? r / 2 : -1) : r - rem;
  }
  int old_rank(int new_rank) const { return member(new_rank < rem ? 2 * new_rank + 1 : new_rank + rem); }
  int position(int rank) const;
  int member(int position) const { return members.empty() ? position : members[static_cast<size_t>(position)]; }
  // The chunks (one per rank) that new rank i answers for: two for a folded pair, else one.
  std::vector<Chunk> blocks(const std::vector<Chunk>& chunks) const;
};

PowerOfTwoFold fold_to_power_of_two(int p);
// Recursive halving and doubling among `members` only (a power of two of them: no fold).
PowerOfTwoFold fold_members(std::vector<int> members);

// A rooted tree over the ranks of a group: each rank's parent (-1 at the root) and its
// children (at most two).
struct Tree {
  int root = 0;
  std::vector<int> parent;
  std::vector<std::vector<int>> children;
};

// Binary heap order from `root`: relative rank i has children 2i+1 and 2i+2.
Tree heap_tree(int p, int root);

// NCCL's double binary tree (src/graph/trees.cc): the first tree is NCCL's in-order btree
// rooted at rank 0 (odd ranks are leaves), the second its mirror image r -> p-1-r when p is
// even, or the same tree shifted by one rank when p is odd, so that every rank is an inner
// node in at most one of them (rank 0 in both when p is odd, with one child in each).
std::array<Tree, 2> double_binary_tree(int p);

// A single-port step schedule for pipelining segments down trees (broadcast) and, run
// backwards, up them (reduce): at each step a rank sends at most one message and receives
// at most one, so no two messages ever share a link of a star.
// Broadcast: rank v receives segment j of tree t from its parent at step
// first_step[t][v] + 2j (-1 at the root), and the parent sends it at that same step.
// A rank with two children serves one at odd steps and the other at even steps.
// Reduce: the mirror image in time, segment j of tree t going from v to its parent at step
// steps - 1 - (first_step[t][v] + 2 (k_t - 1 - j)), where `steps` is the broadcast's length.
struct TreeSchedule {
  std::vector<Tree> trees;
  std::vector<std::vector<int>> first_step;

  // Steps of one phase (broadcast or reduce) when tree t carries segments[t] segments.
  int steps(const std::vector<size_t>& segments) const;
};

// One heap tree: rank v's first child one step after v's own receive, its second child
// two steps after. steps = 2k - 2 + W for p >= 3, W = max over heap positions x = 1..p of
// floor(log2 x) + popcount(x) - 1 (its depth plus its turns to a second child).
TreeSchedule schedule_binary_tree(int p, int root);

// Both trees of double_binary_tree, interleaved so that a rank's two receives (one per
// tree) fall on steps of different parity: the parity of each (tree, rank) is a 2-colouring
// that also gives siblings different parities.
TreeSchedule schedule_double_binary_tree(int p);

}  // namespace collsim
