// Every algorithm on real buffers, against a reference computed here from inputs chosen
// here (small integers, so every exact result is representable and comparisons are exact).
// p in {1,2,3,4,5,7,8,13,16,33}, counts {1, p-1, p, 1000, 1001}, several roots; the
// hierarchical allreduce over equal and unequal groups (blocks of group_size ranks, and
// the zones of a platform file, also with ranks placed across them), the parameter server
// with S in {1, 2, 3, p} servers.
// Reduce-scatter and allgather cut the vector into split_evenly(count, p) chunks, written
// out here: rank r's chunk r holds count/p elements, one more for r < count % p.
#include <doctest/doctest.h>

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <set>
#include <utility>

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

// Chunk r of `count` elements over p ranks: [first, first + length).
std::pair<size_t, size_t> chunk_of(size_t count, int p, int r) {
  const size_t base = count / static_cast<size_t>(p), extra = count % static_cast<size_t>(p);
  const auto rank = static_cast<size_t>(r);
  return {rank * base + std::min(rank, extra), base + (rank < extra ? 1 : 0)};
}

bool in_chunk(size_t count, int p, int r, size_t i) {
  const auto [first, length] = chunk_of(count, p, r);
  return i >= first && i < first + length;
}

// An allgather rank starts with only its own chunk: the rest of its buffer holds -77, a
// value no result may keep.
InputFn test_input(Collective collective, OpKind op, int p) {
  return [collective, op, p](int rank, Buffer& buf) {
    for (size_t i = 0; i < buf.carried(); ++i) {
      const bool mine = collective != Collective::allgather || in_chunk(buf.carried(), p, rank, i);
      buf.set(i, mine ? static_cast<long double>(input_value(rank, i, op, p)) : -77.0L);
    }
  };
}

// The rank whose chunk holds element i.
int owner_of(size_t count, int p, size_t i) {
  int r = 0;
  while (!in_chunk(count, p, r, i)) ++r;
  return r;
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
    case Dtype::bfloat16: return static_cast<float>(Bfloat16(static_cast<float>(acc) / static_cast<float>(p)));
    case Dtype::float16: return static_cast<float>(Float16(static_cast<float>(acc) / static_cast<float>(p)));
    case Dtype::int32:
    case Dtype::int8:
    case Dtype::uint8:
    case Dtype::int64: return acc / p;
  }
  return 0;
}

// Changes a test scenario (the groups of the hierarchical allreduce, the servers of the
// parameter server, the platform) before it runs.
using Adjust = std::function<void(Scenario&)>;

void check_run(const AlgorithmInfo& algorithm, int p, size_t count, Dtype dtype, OpKind op, int root,
               const Adjust& adjust = {}) {
  CAPTURE(algorithm.name);
  CAPTURE(p);
  CAPTURE(count);
  CAPTURE(dtype_name(dtype));
  CAPTURE(op_name(op));
  CAPTURE(root);
  Scenario s = make_scenario(algorithm.collective, algorithm.name, p, count, dtype, op, root);
  s.collective.segment = static_cast<double>(7 * dtype_size(dtype));  // many uneven pipeline segments
  // every element is checked, so every one is carried (the default carry shares its budget
  // among the vectors the direct allreduce holds: 2^20 / 33 / 32 = 993 of 1000 at p = 33)
  s.collective.carried_elements = count;
  if (adjust) adjust(s);
  CAPTURE(s.collective.group_size.value_or(0));
  CAPTURE(s.collective.servers.value_or(1));
  CAPTURE(s.topology);
  const auto run = simulate_in_child(s, test_input(algorithm.collective, op, p));
  REQUIRE_MESSAGE(run.exit_code == 0, run.error);
  size_t mismatches = 0;
  std::string first;
  for (int r = 0; r < p; ++r) {
    if (algorithm.collective == Collective::reduce && r != root) continue;
    for (size_t i = 0; i < count; ++i) {
      // reduce-scatter: rank r answers for its chunk only
      if (algorithm.collective == Collective::reduce_scatter && !in_chunk(count, p, r, i)) continue;
      long double want = 0;
      switch (algorithm.collective) {
        case Collective::broadcast: want = static_cast<long double>(input_value(root, i, op, p)); break;
        case Collective::allgather:
          want = static_cast<long double>(input_value(owner_of(count, p, i), i, op, p));
          break;
        case Collective::alltoall: {
          // element i of rank r: rank j's element r b + i mod b, j = i div b, in the p
          // blocks of b = count div p; past them, rank r's own
          const size_t b = count / static_cast<size_t>(p);
          const bool in_block = b > 0 && i < b * static_cast<size_t>(p);
          want = in_block ? input_value(static_cast<int>(i / b), static_cast<size_t>(r) * b + i % b, op, p)
                          : input_value(r, i, op, p);
          break;
        }
        default: want = expected_reduction(op, dtype, p, i);
      }
      const long double got = run.results[static_cast<size_t>(r)].get(i);
      if (got != want && mismatches++ == 0)
        first = fmt::format("rank {} element {}: got {} want {}", r, i, static_cast<double>(got),
                            static_cast<double>(want));
    }
  }
  CHECK_MESSAGE(mismatches == 0, first);
}

void check_collective(Collective collective) {
  const bool copies = collective == Collective::broadcast || collective == Collective::allgather ||
                      collective == Collective::alltoall;
  const std::vector<Dtype> copied_types = collective == Collective::alltoall
                                              ? std::vector<Dtype>{Dtype::float32, Dtype::bfloat16, Dtype::int8, Dtype::int64}
                                              : std::vector<Dtype>{Dtype::float32, Dtype::float64, Dtype::int32};
  for (const auto& algorithm : all_algorithms()) {
    if (algorithm.collective != collective) continue;
    // The registry says which algorithms read the root; an allreduce's result does not depend
    // on it, so other roots get one op there.
    const bool rooted = algorithm.uses.root && collective != Collective::allreduce;
    for (int p : test_ps) {
      if (algorithm.name == "nccl-nvls-tree" && p == 1) continue;  // NVLSTree runs across nodes
      const std::vector<int> roots = rooted ? roots_for(p) : std::vector<int>{0};
      for (size_t count : counts_for(p)) {
        if (collective == Collective::allreduce && algorithm.uses.root)
          for (int root : roots_for(p))
            if (root != 0) check_run(algorithm, p, count, Dtype::float32, OpKind::sum, root);
        for (int root : roots) {
          if (copies) {
            for (Dtype dtype : copied_types) check_run(algorithm, p, count, dtype, OpKind::sum, root);
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

// Every op in float32, sum and avg in float64 and int32 (as check_collective does), or
// only a float32 sum and an int32 avg.
void check_ops(const AlgorithmInfo& algorithm, int p, size_t count, bool every_op, const Adjust& adjust) {
  if (!every_op) {
    check_run(algorithm, p, count, Dtype::float32, OpKind::sum, 0, adjust);
    check_run(algorithm, p, count, Dtype::int32, OpKind::avg, 0, adjust);
    return;
  }
  for (OpKind op : {OpKind::sum, OpKind::prod, OpKind::min, OpKind::max, OpKind::avg})
    check_run(algorithm, p, count, Dtype::float32, op, 0, adjust);
  for (Dtype dtype : {Dtype::float64, Dtype::int32})
    for (OpKind op : {OpKind::sum, OpKind::avg}) check_run(algorithm, p, count, dtype, op, 0, adjust);
}

const int variant_ps[] = {1, 2, 3, 5, 7, 8, 13, 16};

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("hierarchical allreduce: correct over blocks of group_size ranks, equal or not") {
    const AlgorithmInfo& hierarchical = find_algorithm(Collective::allreduce, "hierarchical", "test");
    // group sizes 2 and 3 give equal groups where they divide p and a smaller last group
    // where they do not (p = 13: six of 2 and one of 1, four of 3 and one of 1); 1 gives
    // groups of one rank, 5 a few large groups and a small one
    for (int p : variant_ps)
      for (int group_size : {1, 2, 3, 5})
        for (size_t count : counts_for(p))
          check_ops(hierarchical, p, count, group_size == 2 || group_size == 3,
                    [group_size](Scenario& s) { s.collective.group_size = group_size; });
  }
  TEST_CASE("hierarchical allreduce: correct over a platform's zones, also with ranks placed across them") {
    const AlgorithmInfo& hierarchical = find_algorithm(Collective::allreduce, "hierarchical", "test");
    const std::string zones = COLLSIM_SOURCE_DIR "/topologies/two-zones.xml";  // host-0..7, host-8..15
    // 16 ranks: 8 + 8; 12: 8 + 4; 5: all in the first zone
    for (int p : {16, 12, 5})
      for (size_t count : counts_for(p)) check_ops(hierarchical, p, count, p == 12, [&](Scenario& s) { s.topology = zones; });
    // ranks alternate between the zones, then stay in the second: groups {0,2,4} and {1,3,5,6}
    const std::vector<std::string> across{"host-0", "host-8", "host-1", "host-9", "host-2", "host-10", "host-11"};
    for (size_t count : counts_for(7))
      check_ops(hierarchical, 7, count, true, [&](Scenario& s) {
        s.topology = zones;
        s.placement = across;
      });
  }
  TEST_CASE("ring and hierarchical allreduce with channels: correct for k = 2, 3, 8, more channels than elements") {
    // k slices on k rings at once; counts below k leave slices empty. Groups from blocks of
    // group_size ranks (equal or not, turned by each channel) and from a platform's zones
    // with ranks placed across them (channel c's ring is not a turn of rank order then).
    for (const char* name : {"ring", "hierarchical"}) {
      const AlgorithmInfo& algorithm = find_algorithm(Collective::allreduce, name, "test");
      for (int p : {1, 2, 3, 5, 8, 13})
        for (int channels : {2, 3, 8})
          for (int group_size : {0, 3})
            for (size_t count : counts_for(p))
              check_ops(algorithm, p, count, channels == 3 && group_size == 3, [=](Scenario& s) {
                s.collective.channels = channels;
                if (group_size > 0) s.collective.group_size = group_size;
              });
      const std::string zones = COLLSIM_SOURCE_DIR "/topologies/two-zones.xml";
      const std::vector<std::string> across{"host-0", "host-8", "host-1", "host-9", "host-2", "host-10", "host-11"};
      for (size_t count : counts_for(7))
        check_ops(algorithm, 7, count, false, [&](Scenario& s) {
          s.topology = zones;
          s.placement = across;
          s.collective.channels = 4;
        });
    }
  }
  TEST_CASE("ring reduce-scatter and allgather with channels: rank r still ends with (starts from) chunk r") {
    // channel c carries part c of every rank's chunk; counts below p k leave parts empty
    for (Collective kind : {Collective::reduce_scatter, Collective::allgather}) {
      const AlgorithmInfo& ring = find_algorithm(kind, "ring", "test");
      for (int p : {2, 3, 5, 8})
        for (int channels : {2, 3})
          for (int group_size : {0, 3})
            for (size_t count : counts_for(p))
              check_ops(ring, p, count, false, [=](Scenario& s) {
                s.collective.channels = channels;
                if (group_size > 0) s.collective.group_size = group_size;
              });
    }
  }
  TEST_CASE("parameter-server allreduce: correct with 1, 2, 3 and p servers") {
    const AlgorithmInfo& server = find_algorithm(Collective::allreduce, "parameter-server", "test");
    for (int p : variant_ps) {
      std::set<int> counts_of_servers{1, 2, 3, p};
      for (int servers : counts_of_servers) {
        if (servers > p) continue;
        for (size_t count : counts_for(p))
          check_ops(server, p, count, servers == 2 || servers == p, [servers](Scenario& s) { s.collective.servers = servers; });
      }
    }
  }
  TEST_CASE("allreduce algorithms give every rank the reduction of all inputs") { check_collective(Collective::allreduce); }
  TEST_CASE("reduce algorithms give the root the reduction of all inputs") { check_collective(Collective::reduce); }
  TEST_CASE("broadcast algorithms give every rank the root's input") { check_collective(Collective::broadcast); }
  TEST_CASE("reduce-scatter algorithms give rank r the reduction of chunk r") {
    check_collective(Collective::reduce_scatter);
  }
  TEST_CASE("allgather algorithms give every rank every rank's chunk") { check_collective(Collective::allgather); }
  TEST_CASE("alltoall algorithms give rank r block r of every rank, in rank order") {
    check_collective(Collective::alltoall);
  }
}
