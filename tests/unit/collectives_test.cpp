// The new collectives' definitions (names, defaults, which part holds a reduction, how
// they are verified) and the arithmetic their algorithms share: the fold onto a power of
// two, NCCL's double binary tree and the single-port tree schedules.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "algorithms/chunks.hpp"
#include "algorithms/nccl_trees.hpp"
#include "algorithms/nvls_plan.hpp"
#include "algorithms/pipelined_rounds.hpp"
#include "algorithms/registry.hpp"
#include "sim/verify.hpp"

using namespace collsim;

TEST_CASE("reduce-scatter and allgather are collectives with ring as default algorithm") {
  CHECK(parse_collective("reduce-scatter", "k") == Collective::reduce_scatter);
  CHECK(parse_collective("allgather", "k") == Collective::allgather);
  CHECK(collective_name(Collective::reduce_scatter) == "reduce-scatter");
  CHECK(collective_names() ==
        std::vector<std::string>{"allreduce", "broadcast", "reduce", "reduce-scatter", "allgather", "alltoall"});
  CHECK(default_algorithm(Collective::alltoall) == "pairwise");
  CHECK(algorithm_names(Collective::alltoall) == std::vector<std::string>{"pairwise", "direct", "nccl-alltoall"});
  CHECK(default_algorithm(Collective::reduce_scatter) == "ring");
  CHECK(default_algorithm(Collective::allgather) == "ring");
  CHECK(default_algorithm(Collective::broadcast) == "binomial");
  CHECK(algorithm_names(Collective::reduce_scatter) == std::vector<std::string>{"ring", "recursive-halving"});
  CHECK(algorithm_names(Collective::allgather) == std::vector<std::string>{"ring", "recursive-doubling"});
}

TEST_CASE("the part of a rank's buffer that avg divides") {
  // 10 elements over 4 ranks: chunks 3, 3, 2, 2
  CHECK(reduced_part(Collective::reduce_scatter, 10, 2, 4, 0)->offset == 6);
  CHECK(reduced_part(Collective::reduce_scatter, 10, 2, 4, 0)->count == 2);
  CHECK(reduced_part(Collective::allreduce, 10, 2, 4, 0)->count == 10);
  CHECK(reduced_part(Collective::reduce, 10, 1, 4, 1)->count == 10);
  CHECK_FALSE(reduced_part(Collective::reduce, 10, 2, 4, 1));
  CHECK_FALSE(reduced_part(Collective::allgather, 10, 2, 4, 0));
  CHECK_FALSE(reduced_part(Collective::broadcast, 10, 2, 4, 0));
}

TEST_CASE("the fold onto a power of two pairs the first 2 rem ranks") {
  const PowerOfTwoFold fold = fold_to_power_of_two(6);
  CHECK(fold.pof2 == 4);
  CHECK(fold.rem == 2);
  CHECK(std::vector<int>{fold.new_rank(0), fold.new_rank(1), fold.new_rank(2), fold.new_rank(3), fold.new_rank(4),
                         fold.new_rank(5)} == std::vector<int>{-1, 0, -1, 1, 2, 3});
  for (int i = 0; i < 4; ++i) CHECK(fold.new_rank(fold.old_rank(i)) == i);
  // 6 chunks of 2: new ranks 0 and 1 answer for two chunks each
  const auto blocks = fold.blocks(split_evenly(12, 6));
  CHECK(blocks[0].offset == 0);
  CHECK(blocks[0].count == 4);
  CHECK(blocks[1].offset == 4);
  CHECK(blocks[1].count == 4);
  CHECK(blocks[3].offset == 10);
  CHECK(blocks[3].count == 2);
  CHECK(fold_to_power_of_two(1).pof2 == 1);
  CHECK(fold_to_power_of_two(8).rem == 0);
}

TEST_CASE("heap tree from any root") {
  const Tree tree = heap_tree(6, 2);  // relative ranks 0..5 are ranks 2,3,4,5,0,1
  CHECK(tree.parent[2] == -1);
  CHECK(tree.children[2] == std::vector<int>{3, 4});
  CHECK(tree.children[3] == std::vector<int>{5, 0});
  CHECK(tree.children[4] == std::vector<int>{1});
}

TEST_CASE("NCCL's double binary tree: the picture of trees.cc, every rank inner in at most one tree") {
  const auto trees = double_binary_tree(12);
  CHECK(trees[0].children[0] == std::vector<int>{8});
  CHECK(trees[0].children[8] == std::vector<int>{4, 10});
  CHECK(trees[0].children[10] == std::vector<int>{9, 11});
  CHECK(trees[1].root == 11);
  CHECK(trees[1].children[11] == std::vector<int>{3});
  CHECK(std::set<int>(trees[1].children[3].begin(), trees[1].children[3].end()) == std::set<int>{1, 7});
  for (int p = 2; p <= 64; ++p) {
    CAPTURE(p);
    const auto t = double_binary_tree(p);
    for (int r = 0; r < p; ++r) {
      const auto& first = t[0].children[static_cast<size_t>(r)];
      const auto& second = t[1].children[static_cast<size_t>(r)];
      const size_t inner = first.size() + second.size();
      const bool both = !first.empty() && !second.empty();
      // p odd: rank 0 is the first root and an inner node of the shifted tree, one child in each
      CHECK((!both || (p % 2 == 1 && r == 0 && inner == 2)));
      CHECK(inner <= 2);
    }
  }
}

namespace {

// Every (rank, step) of a broadcast phase with k segments per tree: sends and receives.
void check_single_port(const TreeSchedule& s, int p, size_t k) {
  std::map<std::pair<int, int>, int> sends, receives;
  for (size_t t = 0; t < s.trees.size(); ++t)
    for (int v = 0; v < p; ++v) {
      const int parent = s.trees[t].parent[static_cast<size_t>(v)];
      if (parent < 0) continue;
      for (int j = 0; j < static_cast<int>(k); ++j) {
        const int step = s.first_step[t][static_cast<size_t>(v)] + 2 * j;
        CHECK(step >= 0);
        ++receives[{v, step}];
        ++sends[{parent, step}];
        // a rank forwards a segment only after receiving it
        if (s.trees[t].parent[static_cast<size_t>(parent)] >= 0)
          CHECK(s.first_step[t][static_cast<size_t>(parent)] < s.first_step[t][static_cast<size_t>(v)]);
      }
    }
  for (const auto& [key, n] : sends) CHECK(n == 1);
  for (const auto& [key, n] : receives) CHECK(n == 1);
}

int heap_weighted_depth(int p) {
  int w = 0;
  for (int x = 1; x <= p; ++x) {
    int depth = 0;
    while ((2 << depth) <= x) ++depth;
    w = std::max(w, depth + __builtin_popcount(static_cast<unsigned>(x)) - 1);
  }
  return w;
}

}  // namespace

TEST_CASE("tree schedules are single-port, and their length has a closed form") {
  for (int p = 1; p <= 200; ++p) {
    CAPTURE(p);
    const TreeSchedule single = schedule_binary_tree(p, p / 3);
    check_single_port(single, p, 3);
    if (p >= 3) CHECK(single.steps({5}) == 2 * 5 - 2 + heap_weighted_depth(p));
    const TreeSchedule dual = schedule_double_binary_tree(p);
    check_single_port(dual, p, 3);
    if (p < 3) continue;
    int log2p = 0;
    while ((1 << log2p) < p) ++log2p;
    // 2k + 2 log2 p - 3 at powers of two, at most 2k + 2 ceil(log2 p) - 3 otherwise
    if ((p & (p - 1)) == 0) CHECK(dual.steps({4, 4}) == 2 * 4 + 2 * log2p - 3);
    else CHECK(dual.steps({4, 4}) <= 2 * 4 + 2 * log2p - 3);
  }
}

namespace {
void input(int rank, Buffer& b) {
  for (size_t i = 0; i < b.carried(); ++i) b.set(i, 10 * rank + static_cast<long double>(i));
}
}  // namespace

TEST_CASE("verification: reduce-scatter checks chunk r of rank r, allgather every chunk exactly") {
  // 3 ranks, 5 elements: chunks [0,2) [2,4) [4,5); the sum of element i is 30 + 3i
  std::vector<Buffer> rs(3, Buffer(Dtype::float32, 5));
  for (int r = 0; r < 3; ++r)
    for (size_t i = 0; i < 5; ++i) rs[static_cast<size_t>(r)].set(i, -1);  // scratch everywhere
  rs[0].set(0, 30), rs[0].set(1, 33), rs[1].set(2, 36), rs[1].set(3, 39), rs[2].set(4, 42);
  CHECK(verify_results(Collective::reduce_scatter, OpKind::sum, 0, rs, input).verified);
  rs[1].set(3, 40);
  const auto wrong = verify_results(Collective::reduce_scatter, OpKind::sum, 0, rs, input);
  CHECK_FALSE(wrong.verified);
  CHECK(wrong.failure.find("rank 1 element 3") == 0);

  // allgather: element i comes from the rank whose chunk holds it
  std::vector<Buffer> ag(3, Buffer(Dtype::float32, 5));
  const long double want[5] = {0, 1, 12, 13, 24};
  for (auto& b : ag)
    for (size_t i = 0; i < 5; ++i) b.set(i, want[i]);
  const auto v = verify_results(Collective::allgather, OpKind::sum, 0, ag, input);
  CHECK(v.verified);
  CHECK(v.bitwise_identical);
  ag[2].set(1, 11);  // rank 1's element 1: not rank 0's chunk
  CHECK_FALSE(verify_results(Collective::allgather, OpKind::sum, 0, ag, input).verified);
}

TEST_CASE("NCCL's tree: each stream passes its chunks on when its heads are in, the streams merged in time order") {
  // 2 nodes x 2 GPUs, one lane, 4 chunks, a hop 1 inside a node and 5 across. Chains 0 -> 1 and
  // 2 -> 3 (heads 0, 2); one head is the other's parent. Each stream's time (and hops behind it):
  // the tails send up at (0, 0), the child head at (1, 1), the root head has every chunk up at
  // 1 + 5 = (6, 2) and sends down then; its tail has them at (7, 3), the child head at (11, 3),
  // which passes them to its tail at (12, 4). Keys 0..5 in that order; chunk j of key k at step
  // 4k + j; a receive is waited for in the round before the step that uses it (a tail's chunks
  // down in its last round, step 23).
  const NcclTrees trees({0, 0, 1, 1}, 1, 4, 1, 1.0, 5.0);
  REQUIRE(trees.last_step() == 23);
  int child = -1;
  for (int head : {0, 2})
    for (const auto& m : trees.messages_of(head))
      if (m.send && m.up && (m.peer == 0 || m.peer == 2)) child = head;
  REQUIRE(child >= 0);
  const int root = 2 - child;
  struct Expected {
    int step, wait;
  };
  // (sender, receiver) -> chunk 0's step and its receiver's wait; chunk j: step + j, waits alike
  // but for the tails' chunks down (waited for at step 23: wait - j)
  auto expected = [&](int from, int to) -> Expected {
    if (from == child + 1) return {0, 3};      // child's tail up: used by the child head at step 4
    if (from == root + 1) return {0, 7};       // root's tail up: used by the root at step 8
    if (from == child && to == root) return {4, 3};
    if (from == root && to == root + 1) return {8, 15};  // to a tail: its last round
    if (from == root && to == child) return {8, 7};      // used at the child head's step 16
    return {16, 7};                                      // the child head to its tail
  };
  int bodies = 0, heads = 0;
  for (int rank = 0; rank < 4; ++rank)
    for (const auto& m : trees.messages_of(rank)) {
      CAPTURE(rank);
      CAPTURE(m.peer);
      CAPTURE(m.chunk);
      const int from = m.send ? rank : m.peer, to = m.send ? m.peer : rank;
      const Expected e = expected(from, to);
      CHECK(m.step == e.step + m.chunk);
      const bool to_tail = !m.up && (to == child + 1 || to == root + 1);
      if (m.body) CHECK(m.wait == at_end_wait_steps);  // the connection's bytes: both ends last
      else CHECK(m.wait == (to_tail ? e.wait - m.chunk : e.wait));
      if (m.body) CHECK(m.chunk == 0);
      (m.body ? bodies : heads) += 1;
    }
  CHECK(heads == 4 * bodies);  // 4 chunks on each of the 6 connections' both ends
  CHECK(bodies == 12);
}

TEST_CASE("hierarchical's NVLS level with the ring: each ring step 1 + lag steps after the last, pieces as a ring's") {
  // 3 nodes of 2 GPUs, 2 chunks of 12 elements (slices of 6, pieces of 2), lag 7: chunk j's ring
  // steps at j + 2, j + 10 (reduce-scatter), j + 18, j + 26 (allgather), T = 2 + 2 x 2 x 8 = 34;
  // GPU m of node n sends piece (n - s) mod 3, then (n + 1 - s') mod 3, to GPU m of node n + 1
  const NvlsPlan plan({0, 0, 1, 1, 2, 2}, 24, 12, NvlsAcross::ring, 7);
  for (int rank = 0; rank < 6; ++rank) {
    const int node = rank / 2, member = rank % 2;
    int ring_sends = 0;
    for (const auto& m : plan.messages_of(rank)) {
      if (m.kind == NvlsPlan::Kind::multicast_up) CHECK(m.step == m.chunk + 34);
      if (m.kind == NvlsPlan::Kind::multicast_down) CHECK((m.step == m.chunk + 35 && m.wait == 7));
      if (m.kind != NvlsPlan::Kind::ring_reduce && m.kind != NvlsPlan::Kind::ring_gather) continue;
      const int s = (m.step - m.chunk - 2) / 8;
      CHECK(m.step == m.chunk + 2 + 8 * s);
      CHECK(m.wait == 7);
      CHECK((m.kind == NvlsPlan::Kind::ring_reduce) == (s < 2));
      const Chunk piece = plan.span(node, m);
      CHECK(piece.count == 2);
      CHECK(piece.offset == static_cast<size_t>(12 * m.chunk + 6 * member + 2 * m.piece));
      if (!m.send) {
        CHECK(m.peer == (node + 2) % 3 * 2 + member);
        CHECK(NvlsPlan::partial(m) == (s < 2));
        continue;
      }
      ++ring_sends;
      CHECK(m.peer == (node + 1) % 3 * 2 + member);
      CHECK(m.piece == (s < 2 ? (node - s + 3) % 3 : (node + 1 - (s - 2) + 3) % 3));
    }
    CHECK(ring_sends == 2 * 4);
  }
}

TEST_CASE("NCCL's NVLSTree: a hop across nodes is waited for fifo - 1 steps late, and used the step after") {
  // NVLSTree, the same nodes: GPU i of the child node sends its slice up at j + 2, the root GPU
  // sends it down at j + 2 + 8 (T = 10), the child's multicast at j + 2 + 8 + 8 = j + 18
  const NvlsPlan plan({0, 0, 1, 1}, 8, 2, true, 7);
  for (int rank = 0; rank < 4; ++rank)
    for (const auto& m : plan.messages_of(rank)) {
      if (m.kind == NvlsPlan::Kind::tree_up || m.kind == NvlsPlan::Kind::tree_down) CHECK(m.wait == 7);
      if (m.kind == NvlsPlan::Kind::tree_up && m.send) CHECK(m.step == m.chunk + 2);
      if (m.kind == NvlsPlan::Kind::tree_down && m.send) CHECK(m.step == m.chunk + 10);
      if (m.kind == NvlsPlan::Kind::multicast_up) CHECK((m.step == m.chunk + 10 || m.step == m.chunk + 18));
    }
}
