// Formulas checked against hand-worked numbers (alpha = 1 us, B = 1 GB/s, 4-byte elements).
#include <limits>
#include <doctest/doctest.h>

#include "model/cost_model.hpp"

using namespace collsim;

namespace {
ModelInput input(int p, size_t elems) {
  ModelInput in;
  in.p = p;
  in.alpha = 1e-6;
  in.bandwidth = 1e9;
  in.elems = elems;
  in.bytes_per_elem = 4;
  in.segment_elems = elems;
  return in;
}
}  // namespace

TEST_CASE("ring allreduce: 2(p-1) steps of alpha + n/(pB)") {
  // p=4, n=4000 B: 6 * (1us + 1000 B / 1 GB/s = 1 us) = 12 us
  CHECK(model_allreduce_ring(input(4, 1000)) == doctest::Approx(12e-6).scale(0));
  // uneven: 1001 elements -> largest chunk 251 elements = 1004 B
  CHECK(model_allreduce_ring(input(4, 1001)) == doctest::Approx(6 * (1e-6 + 1004e-9)).scale(0));
  CHECK(model_allreduce_ring(input(1, 1000)) == 0);
}

TEST_CASE("naive allreduce grows with p, binomial with log p") {
  // 2 * (1us + 3 * 4us) = 26 us
  CHECK(model_allreduce_naive(input(4, 1000)) == doctest::Approx(26e-6).scale(0));
  // 2 * 3 rounds * (1us + 4us) = 30 us for p=5
  CHECK(model_allreduce_naive_binomial(input(5, 1000)) == doctest::Approx(30e-6).scale(0));
}

TEST_CASE("pipeline broadcast: p-1 + k-1 steps") {
  ModelInput in = input(4, 1000);
  in.segment_elems = 250;  // k = 4 segments of 1000 B: (3 + 3) * (1us + 1us) = 12 us
  CHECK(model_broadcast_pipeline(in) == doctest::Approx(12e-6).scale(0));
  in.segment_elems = 300;  // 300,300,300,100: 5 * 2.2us + (1us + 0.4us) = 12.4 us
  CHECK(model_broadcast_pipeline(in) == doctest::Approx(12.4e-6).scale(0));
}

TEST_CASE("lower bounds and bus bandwidth factors") {
  const LowerBound b = lower_bound(Collective::allreduce, input(4, 1000));
  CHECK(b.bandwidth_term == doctest::Approx(2.0 * 3 / 4 * 4e-6).scale(0));
  CHECK(b.latency_term == doctest::Approx(2e-6).scale(0));
  CHECK(b.value() == doctest::Approx(6e-6).scale(0));
  CHECK(lower_bound(Collective::broadcast, input(5, 1000)).latency_term == doctest::Approx(3e-6).scale(0));
  CHECK(busbw_factor(Collective::allreduce, 8) == doctest::Approx(1.75).scale(0));
  CHECK(busbw_factor(Collective::broadcast, 8) == 1);
  CHECK(ceil_log2(1) == 0);
  CHECK(ceil_log2(5) == 3);
  CHECK(ceil_log2(64) == 6);
}

TEST_CASE("recursive doubling: log2 p whole-vector steps, two more to fold when p is not a power of 2") {
  // p=8: 3 * (1us + 4us) = 15 us; p=6: (2 + 2) * 5us = 20 us
  CHECK(model_allreduce_recursive_doubling(input(8, 1000)) == doctest::Approx(15e-6).scale(0));
  CHECK(model_allreduce_recursive_doubling(input(6, 1000)) == doctest::Approx(20e-6).scale(0));
  CHECK(model_allreduce_recursive_doubling(input(1, 1000)) == 0);
}

TEST_CASE("rabenseifner: 2 log2 p alpha + 2(p-1)/p n/B, plus a whole-vector fold and unfold") {
  // p=4, n=4000 B: 2*2*1us + 2*3/4*4us = 10 us
  CHECK(model_allreduce_rabenseifner(input(4, 1000)) == doctest::Approx(10e-6).scale(0));
  // p=5: the same over pof2=4, plus 2 * (1us + 4us)
  CHECK(model_allreduce_rabenseifner(input(5, 1000)) == doctest::Approx(20e-6).scale(0));
  // uneven: 1001 elements over 4 blocks (251,250,250,250): halves of 501 then 251 elements
  CHECK(model_allreduce_rabenseifner(input(4, 1001)) == doctest::Approx(2 * ((1e-6 + 2004e-9) + (1e-6 + 1004e-9))).scale(0));
}

TEST_CASE("binary tree: 2(2k-2+W) steps of one segment, two ranks stream k segments per phase") {
  ModelInput in = input(8, 1000);
  in.segment_elems = 250;  // k = 4 segments of 1000 B, 2 us each; heap of 8: W = 4 (position 7: depth 2, 2 turns)
  CHECK(model_allreduce_binary_tree(in) == doctest::Approx(2 * (2 * 4 - 2 + 4) * 2e-6).scale(0));
  in.p = 2;
  CHECK(model_allreduce_binary_tree(in) == doctest::Approx(2 * 4 * 2e-6).scale(0));
  in.p = 1;
  CHECK(model_allreduce_binary_tree(in) == 0);
}

TEST_CASE("double binary tree: 2(2k + 2 log2 p - 3) steps of one segment at powers of two") {
  ModelInput in = input(16, 1000);
  in.segment_elems = 125;  // halves of 500 elements: k = 4 segments of 500 B, 1.5 us each
  CHECK(model_allreduce_double_binary_tree(in) == doctest::Approx(2 * (8 + 8 - 3) * 1.5e-6).scale(0));
  in.p = 2;
  CHECK(model_allreduce_double_binary_tree(in) == doctest::Approx(2 * 4 * 1.5e-6).scale(0));
}

TEST_CASE("direct allreduce: one latency, p-1 vectors through each link") {
  CHECK(model_allreduce_direct(input(4, 1000)) == doctest::Approx(1e-6 + 3 * 4e-6).scale(0));
}

TEST_CASE("reduce-scatter and allgather: ring (p-1) steps of n/p, recursive halving and doubling") {
  // p=4, n=4000 B: 3 * (1us + 1us) = 6 us; log2 4 * 1us + 3/4 * 4us = 5 us
  CHECK(model_reduce_scatter_ring(input(4, 1000)) == doctest::Approx(6e-6).scale(0));
  CHECK(model_allgather_ring(input(4, 1000)) == doctest::Approx(6e-6).scale(0));
  CHECK(model_reduce_scatter_recursive_halving(input(4, 1000)) == doctest::Approx(5e-6).scale(0));
  CHECK(model_allgather_recursive_doubling(input(4, 1000)) == doctest::Approx(5e-6).scale(0));
  // p=3, 999 elements (333 each = 1332 B): fold (1us + 3996 ns), one step of two chunks
  // (1us + 2664 ns), unfold (1us + 1332 ns)
  CHECK(model_reduce_scatter_recursive_halving(input(3, 999)) == doctest::Approx(3e-6 + 7992e-9).scale(0));
  CHECK(model_allgather_recursive_doubling(input(3, 999)) == doctest::Approx(3e-6 + 7992e-9).scale(0));
}

TEST_CASE("scatter-allgather broadcast: binomial scatter then ring allgather") {
  // p=4, n=4000 B, chunks of 1000 B: scatter 2 chunks then 1 (1us+2us, 1us+1us), ring 3 * 2us
  CHECK(model_broadcast_scatter_allgather(input(4, 1000)) == doctest::Approx(5e-6 + 6e-6).scale(0));
  // p=5, 1000 elements (200 = 800 B each): scatter 1, 2, 1 chunks, ring 4 steps
  CHECK(model_broadcast_scatter_allgather(input(5, 1000)) == doctest::Approx(3e-6 + 4 * 800e-9 + 4 * 1.8e-6).scale(0));
}

TEST_CASE("reduce-scatter and allgather: lower bound (p-1)/p n/B, busbw factor (p-1)/p") {
  const LowerBound b = lower_bound(Collective::reduce_scatter, input(4, 1000));
  CHECK(b.bandwidth_term == doctest::Approx(3.0 / 4 * 4e-6).scale(0));
  CHECK(b.latency_term == doctest::Approx(2e-6).scale(0));
  CHECK(lower_bound(Collective::allgather, input(5, 1000)).latency_term == doctest::Approx(3e-6).scale(0));
  CHECK(busbw_factor(Collective::reduce_scatter, 8) == doctest::Approx(7.0 / 8).scale(0));
  CHECK(busbw_factor(Collective::allgather, 4) == doctest::Approx(0.75).scale(0));
}

TEST_CASE("parameter server: push and pull, p-1 shards of n/S through a server's link each") {
  ModelInput in = input(4, 1000);
  // S = 1: the naive allreduce, 2 * (1us + 3 * 4us) = 26 us
  CHECK(model_allreduce_parameter_server(in) == doctest::Approx(26e-6).scale(0));
  in.servers = 2;  // shards of 2000 B: 2 * (1us + 3 * 2us) = 14 us
  CHECK(model_allreduce_parameter_server(in) == doctest::Approx(14e-6).scale(0));
  in.servers = 4;  // shards of 1000 B: 2 * (1us + 3 * 1us) = 8 us, like a direct reduce-scatter + allgather
  CHECK(model_allreduce_parameter_server(in) == doctest::Approx(8e-6).scale(0));
  in.servers = 3;  // 1000 elements over 3 shards: the largest of 334 elements = 1336 B
  CHECK(model_allreduce_parameter_server(in) == doctest::Approx(2 * (1e-6 + 3 * 1336e-9)).scale(0));
  in.servers = 9;  // more servers than ranks (a shrunken group): every rank serves
  CHECK(model_allreduce_parameter_server(in) == doctest::Approx(8e-6).scale(0));
  CHECK(model_allreduce_parameter_server(input(1, 1000)) == 0);
}

TEST_CASE("hierarchical: 2(g-1) steps of n/g inside, 2(G-1) steps of n/(gG) between") {
  ModelInput in = input(8, 1200);  // n = 4800 B
  // no groups given: one group of 8, the ring: 14 * (1us + 600 ns)
  CHECK(model_allreduce_hierarchical(in) == doctest::Approx(14 * 1.6e-6).scale(0));
  CHECK(model_allreduce_hierarchical(in) == doctest::Approx(model_allreduce_ring(in)).scale(0));
  // 2 groups of 4: 6 * (1us + 1200 ns) inside, 2 * (5us + 600 B / (2 GB/s / 4)) between
  in.group_sizes = {4, 4};
  in.inter = SharedRoutes{5e-6, 2e9, 4};
  CHECK(model_allreduce_hierarchical(in) == doctest::Approx(6 * 2.2e-6 + 2 * (5e-6 + 1.2e-6)).scale(0));
  // groups of one: a ring between the 8 groups, of the whole vector: 14 * (5us + 600 B / 0.5 GB/s)
  in.group_sizes = std::vector<int>(8, 1);
  CHECK(model_allreduce_hierarchical(in) == doctest::Approx(14 * (5e-6 + 1.2e-6)).scale(0));
  // unequal groups 3 and 5 (an estimate): inside, the group of 5 (4 steps of 240 elements)
  // is slower than the group of 3 (2 steps of 400); between, pieces of 240, 160, 80, 240,
  // 80, 160, 240 elements cut in 2, and the first member of the group of 3 owns the first
  // two: it sends 120 + 80 elements (800 B) at once through its own link at 2 GB/s, and
  // its partners in the group of 5 then start their allgather that much later
  in.group_sizes = {3, 5};
  in.inter = SharedRoutes{5e-6, 2e9, 1};
  CHECK(model_allreduce_hierarchical(in) == doctest::Approx(2 * 4 * (1e-6 + 960e-9) + 2 * (5e-6 + 400e-9)).scale(0));
  CHECK(model_allreduce_hierarchical(input(1, 1000)) == 0);
}

TEST_CASE("ceil_log2 holds for every int, the largest included") {
  CHECK(ceil_log2(1) == 0);
  CHECK(ceil_log2((1 << 30) + 1) == 31);
  CHECK(ceil_log2(std::numeric_limits<int>::max()) == 31);
}
