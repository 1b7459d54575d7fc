// Every algorithm on real buffers, against a reference computed here from inputs chosen
// here (small integers, so every exact result is representable and comparisons are exact).
// p in {1,2,3,4,5,7,8,13,16,33}, counts {1, p-1, p, 1000, 1001}, several roots.
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <set>

#include "algorithms/registry.hpp"
#include "sim_harness.hpp"

using namespace collsim;
using collsim::testing::make_scenario;
using collsim::testing::simulate_in_child;

namespace {

const int test_ps[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 33};

std::vector<size_t> counts_for(int p) {
  std::set<size_t> counts{1, static_cast<size_t>(p), 1000, 1001};
  if (p > 1) counts.insert(static_cast<size_t>(p - 1));
  return {counts.begin(), counts.end()};
}

std::vector<int> roots_for(int p) {
  std::set<int> roots{0, p - 1, p / 2};
  return {roots.begin(), roots.end()};
}

// Rank r's element i. Products use +-1 and a single 2 per element, so they never overflow.
long long input_value(int r, size_t i, OpKind op, int p) {
  if (op == OpKind::prod) return static_cast<size_t>(r) == i % static_cast<size_t>(p) ? 2 : ((r + i) % 3 == 0 ? -1 : 1);
  return static_cast<long long>((r * 7 + i * 3) % 11) - 5;
}

InputFn test_input(OpKind op, int p) {
  return [op, p](int rank, Buffer& buf) {
    for (size_t i = 0; i < buf.size(); ++i) buf.set(i, static_cast<long double>(input_value(rank, i, op, p)));
  };
}

// The reduced value of element i over all ranks, computed in the result's own type for avg.
long double expected_reduction(OpKind op, Dtype dtype, int p, size_t i) {
  long long acc = input_value(0, i, op, p);
  for (int r = 1; r < p; ++r) {
    const long long x = input_value(r, i, op, p);
    switch (op) {
      case OpKind::sum:
      case OpKind::avg: acc += x; break;
      case OpKind::prod: acc *= x; break;
      case OpKind::min: acc = std::min(acc, x); break;
      case OpKind::max: acc = std::max(acc, x); break;
    }
  }
  if (op != OpKind::avg) return static_cast<long double>(acc);
  switch (dtype) {
    case Dtype::float32: return static_cast<float>(acc) / static_cast<float>(p);
    case Dtype::float64: return static_cast<double>(acc) / static_cast<double>(p);
    case Dtype::int32: return static_cast<int32_t>(acc) / p;
  }
  return 0;
}

void check_run(const AlgorithmInfo& algorithm, int p, size_t count, Dtype dtype, OpKind op, int root) {
  CAPTURE(algorithm.name);
  CAPTURE(p);
  CAPTURE(count);
  CAPTURE(dtype_name(dtype));
  CAPTURE(op_name(op));
  CAPTURE(root);
  Scenario s = make_scenario(algorithm.collective, algorithm.name, p, count, dtype, op, root);
  s.collective.segment = static_cast<double>(7 * dtype_size(dtype));  // many uneven pipeline segments
  const auto run = simulate_in_child(s, test_input(op, p));
  REQUIRE_MESSAGE(run.exit_code == 0, run.error);
  size_t mismatches = 0;
  std::string first;
  for (int r = 0; r < p; ++r) {
    if (algorithm.collective == Collective::reduce && r != root) continue;
    for (size_t i = 0; i < count; ++i) {
      const long double want = algorithm.collective == Collective::broadcast
                                   ? static_cast<long double>(input_value(root, i, op, p))
                                   : expected_reduction(op, dtype, p, i);
      const long double got = run.results[static_cast<size_t>(r)].get(i);
      if (got != want && mismatches++ == 0)
        first = fmt::format("rank {} element {}: got {} want {}", r, i, static_cast<double>(got),
                            static_cast<double>(want));
    }
  }
  CHECK_MESSAGE(mismatches == 0, first);
}

void check_collective(Collective collective) {
  for (const auto& algorithm : all_algorithms()) {
    if (algorithm.collective != collective) continue;
    for (int p : test_ps) {
      const std::vector<int> roots = collective == Collective::allreduce ? std::vector<int>{0} : roots_for(p);
      for (size_t count : counts_for(p)) {
        for (int root : roots) {
          if (collective == Collective::broadcast) {
            for (Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::int32})
              check_run(algorithm, p, count, dtype, OpKind::sum, root);
            continue;
          }
          for (OpKind op : {OpKind::sum, OpKind::prod, OpKind::min, OpKind::max, OpKind::avg})
            check_run(algorithm, p, count, Dtype::float32, op, root);
          for (Dtype dtype : {Dtype::float64, Dtype::int32})
            for (OpKind op : {OpKind::sum, OpKind::avg}) check_run(algorithm, p, count, dtype, op, root);
        }
      }
    }
  }
}

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("allreduce algorithms give every rank the reduction of all inputs") { check_collective(Collective::allreduce); }
  TEST_CASE("reduce algorithms give the root the reduction of all inputs") { check_collective(Collective::reduce); }
  TEST_CASE("broadcast algorithms give every rank the root's input") { check_collective(Collective::broadcast); }
}
