// The messages the run limits count for each algorithm (algorithms/message_counts.hpp)
// against the messages real runs send, as the run's message log counts them: every
// algorithm at p in {1, 2, 3, 5, 8, 13}, a vector shorter than p and a long one cut into
// several segments, with the variants that change the count (channels, group sizes,
// servers). Where the groups come from the platform's zones the count is an upper bound.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "algorithms/message_counts.hpp"
#include "sim_harness.hpp"

using namespace collsim;
using collsim::testing::make_scenario;
using collsim::testing::simulate_in_child;

namespace {

constexpr size_t segment_elements = 100;  // 400 bytes of float32

// Runs `s` and returns what its message log counted.
uint64_t counted(const Scenario& s) {
  const auto run = simulate_in_child(s);
  REQUIRE_MESSAGE(run.exit_code == 0, run.error);
  return run.messages;
}

CollectiveShape shape_of(const Scenario& s) {
  const size_t elems = static_cast<size_t>(s.collective.size) / dtype_size(s.collective.dtype);
  return {*s.workers, elems, segment_elements, s.nccl.channels.value_or(s.collective.channels),
          s.collective.servers.value_or(1), s.collective.group_size.value_or(0),
          s.collective.parameter_server.placement != ServerPlacement::workers,
          s.collective.intra == HierarchyLevel::nvls};
}

Scenario scenario_for(const AlgorithmInfo& algorithm, int p, size_t count) {
  Scenario s = make_scenario(algorithm.collective, algorithm.name, p, count);
  s.collective.root = p / 2;
  s.collective.segment = static_cast<double>(segment_elements * sizeof(float));
  if (algorithm.uses.nccl) s.nccl.channels = 3;  // NCCL's tuner would choose them from the size
  return s;
}

}  // namespace

TEST_CASE("every algorithm sends the messages the run limits count") {
  for (const AlgorithmInfo& algorithm : all_algorithms())
    for (int p : {1, 2, 3, 5, 8, 13})
      for (size_t count : {size_t{2}, size_t{1001}}) {
        const Scenario s = scenario_for(algorithm, p, count);
        CAPTURE(fmt::format("{} {} p={} count={}", collective_name(algorithm.collective), algorithm.name, p, count));
        if (algorithm.name == "nccl-nvls-tree" && p == 1) continue;  // NVLSTree runs across nodes
        // NCCL's tree, NVLS and NVLSTree: chunks NCCL's tuner sizes; its alltoall: parts its p2p
        // plan sizes; an upper bound
        if (algorithm.name == "nccl-tree" || algorithm.name == "nccl-nvls" || algorithm.name == "nccl-nvls-tree" ||
            algorithm.name == "nccl-alltoall" || algorithm.name.rfind("nccl-collnet", 0) == 0)
          CHECK(collective_messages(algorithm, shape_of(s)) >= static_cast<double>(counted(s)));
        else
          CHECK(collective_messages(algorithm, shape_of(s)) == static_cast<double>(counted(s)));
      }
}

TEST_CASE("the variants that change the count: channels, group sizes, servers") {
  const AlgorithmInfo& ring = find_algorithm(Collective::allreduce, "ring", "test");
  const AlgorithmInfo& hierarchical = find_algorithm(Collective::allreduce, "hierarchical", "test");
  const AlgorithmInfo& servers = find_algorithm(Collective::allreduce, "parameter-server", "test");
  for (int p : {2, 5, 12}) {
    for (int channels : {2, 3}) {
      for (const AlgorithmInfo* algorithm : {&ring, &hierarchical}) {
        for (int group : {0, 2, 3, 5}) {
          if (group > 0 && algorithm == &ring) continue;
          Scenario s = scenario_for(*algorithm, p, 1001);
          s.collective.channels = channels;
          if (group > 0) s.collective.group_size = group;
          CAPTURE(fmt::format("{} p={} channels={} group_size={}", algorithm->name, p, channels, group));
          CHECK(collective_messages(*algorithm, shape_of(s)) == static_cast<double>(counted(s)));
        }
      }
    }
    for (Collective kind : {Collective::reduce_scatter, Collective::allgather}) {
      const AlgorithmInfo& channelled = find_algorithm(kind, "ring", "test");
      Scenario s = scenario_for(channelled, p, 1001);
      s.collective.channels = 3;
      CAPTURE(fmt::format("{} ring p={} channels=3", collective_name(kind), p));
      CHECK(collective_messages(channelled, shape_of(s)) == static_cast<double>(counted(s)));
    }
    for (int count : {1, 2, p}) {
      Scenario s = scenario_for(servers, p, 1001);
      s.collective.servers = count;
      CAPTURE(fmt::format("parameter-server p={} servers={}", p, count));
      CHECK(collective_messages(servers, shape_of(s)) == static_cast<double>(counted(s)));
      // server processes beside the ranks: their 2 S p pushes and pulls are logged too
      s.collective.parameter_server.given = true;
      s.collective.parameter_server.placement = ServerPlacement::shared;
      CHECK(collective_messages(servers, shape_of(s)) == 2.0 * count * p);
      CHECK(static_cast<double>(counted(s)) == 2.0 * count * p);
    }
  }
}

TEST_CASE("hierarchical over a platform's zones: at most the ring's count") {
  const AlgorithmInfo& hierarchical = find_algorithm(Collective::allreduce, "hierarchical", "test");
  for (int p : {5, 12, 16}) {
    Scenario s = scenario_for(hierarchical, p, 1001);
    s.topology = COLLSIM_SOURCE_DIR "/topologies/two-zones.xml";  // host-0..7, host-8..15
    const uint64_t messages = counted(s);
    CAPTURE(p);
    CHECK(static_cast<double>(messages) <= collective_messages(hierarchical, shape_of(s)));
    CHECK(collective_messages(hierarchical, shape_of(s)) == 2.0 * p * (p - 1));
  }
}
