// The parameter server as deployed (collective.parameter_server): dedicated and shared server
// processes, the ratio, local aggregation, the servers' CPU costs. Each time is worked by
// hand from the alpha-beta formulas of docs/algorithms.md#servers-as-deployed (star: alpha =
// 2 us between two hosts, B = 10 GB/s; nodes:N:G: 1 us and 100 GB/s inside a node, 5 us and
// 12.5 GB/s between nodes), and each rank's result against the sum of the inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <fmt/format.h>
#include <functional>

#include "sim_harness.hpp"

using namespace collsim;
using collsim::testing::make_scenario;
using collsim::testing::simulate_in_child;

namespace {

// Rank r holds r + 1 everywhere: every rank must end with p(p+1)/2, exactly in float32.
void fill_rank(int rank, Buffer& buf) {
  for (size_t i = 0; i < buf.carried(); ++i) buf.set(i, rank + 1);
}

collsim::testing::ChildRun run_servers(int p, size_t elements, const std::string& topology,
                                       const std::function<void(Scenario&)>& adjust) {
  Scenario s = make_scenario(Collective::allreduce, "parameter-server", p, elements);
  s.topology = topology;
  s.collective.parameter_server.given = true;
  adjust(s);
  auto run = simulate_in_child(s, fill_rank);
  REQUIRE_MESSAGE(run.exit_code == 0, run.error);
  REQUIRE(run.results.size() == static_cast<size_t>(p));
  for (const Buffer& result : run.results)
    for (size_t i = 0; i < result.carried(); ++i) REQUIRE(result.get(i) == p * (p + 1) / 2);
  return run;
}

constexpr double alpha = 2e-6, B = 10e9;
constexpr double per_message = 10e-6, cpu_bandwidth = 5e9;

// S servers of `placement` (with the CPU costs above) on star:`hosts`: the simulated and the
// model time must both be `want`.
void check_star(int p, int servers, size_t elements, int hosts, ServerPlacement placement, double want) {
  CAPTURE(p);
  CAPTURE(servers);
  const auto run = run_servers(p, elements, fmt::format("star:{}", hosts), [&](Scenario& s) {
    s.collective.servers = servers;
    s.collective.parameter_server.placement = placement;
    s.collective.parameter_server.cpu_per_message = per_message;
    s.collective.parameter_server.cpu_bandwidth = cpu_bandwidth;
  });
  CHECK(run.simulated_time == doctest::Approx(want).epsilon(1e-9).scale(0));
  CHECK(run.model_time == doctest::Approx(want).epsilon(1e-9).scale(0));
}

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("dedicated servers on a star: 2(alpha + max(p,S) n/(SB)) + p(2 c_m + n/(S c)) ") {
    const size_t elements = 12 * 1024;  // equal shards for every S here
    for (int p : {1, 2, 3, 8})
      for (int servers : {1, 2, 4, 12}) {
        const double shard = elements * 4.0 / servers;
        const double want = 2 * (alpha + std::max(p, servers) * shard / B) + p * (2 * per_message + shard / cpu_bandwidth);
        check_star(p, servers, elements, p + servers, ServerPlacement::dedicated, want);
      }
  }
  TEST_CASE("shared servers on a star: 2(alpha + (p-1) n/(SB)) + p(2 c_m + n/(S c)), the local push on the loopback") {
    // Server s beside rank s: its own worker's push and pull take SimGrid's loopback (a
    // fatpipe of 10 GB/s, latency 0: shard / 10 GB/s, shorter than the remote flows), so its
    // link carries the p-1 other workers' shards each way, as when the ranks serve; its CPU
    // still handles p messages. Before the loopback a host's route to itself crossed its own
    // link, and shared cost what dedicated does: max(p, S) flows.
    constexpr double loopback = 10e9;
    for (int p : {2, 3, 8})
      for (int servers : {1, 2, p}) {
        const size_t elements = static_cast<size_t>(p) * 1024;
        const double shard = elements * 4.0 / servers;
        REQUIRE(shard / loopback <= alpha + (p - 1) * shard / B);
        const double want = 2 * (alpha + (p - 1) * shard / B) + p * (2 * per_message + shard / cpu_bandwidth);
        check_star(p, servers, elements, p, ServerPlacement::shared, want);
      }
  }
  TEST_CASE("shared servers on every generated family: a host reaches itself (a torus had no route)") {
    for (const char* topology : {"torus:2x4", "fat-tree:2:4,2:1,2:1,1", "dragonfly:2:2:2", "leaf-spine:2:4", "nodes:2:4"}) {
      CAPTURE(topology);
      const auto run = run_servers(4, 4096, topology, [&](Scenario& s) {
        s.collective.servers = 2;
        s.collective.parameter_server.placement = ServerPlacement::shared;
      });
      CHECK(run.simulated_time == doctest::Approx(run.model_time).epsilon(1e-9).scale(0));
    }
  }
  TEST_CASE("ranks serving with CPU costs: 2(alpha + (p-1) n/(SB)) + (p-1)(2 c_m + n/(S c))") {
    for (int p : {2, 5, 8})
      for (int servers : {1, 2, p}) {
        const size_t elements = static_cast<size_t>(p) * 1024;
        const double shard = elements * 4.0 / servers;
        const double want = 2 * (alpha + (p - 1) * shard / B) + (p - 1) * (2 * per_message + shard / cpu_bandwidth);
        check_star(p, servers, elements, p, ServerPlacement::workers, want);
      }
  }
  TEST_CASE("the ratio sets S: round(ratio x p) dedicated servers") {
    const int p = 8;
    const size_t elements = 8 * 1024;
    const double n = elements * 4.0;
    for (const double ratio : {0.125, 0.25, 0.5, 1.0}) {
      CAPTURE(ratio);
      const int servers = static_cast<int>(ratio * p);
      const auto run = run_servers(p, elements, "star:16", [&](Scenario& s) {
        s.collective.parameter_server.ratio = ratio;
        s.collective.parameter_server.placement = ServerPlacement::dedicated;
      });
      CHECK(run.simulated_time == doctest::Approx(2 * (alpha + p * n / servers / B)).epsilon(1e-9).scale(0));
    }
  }
  TEST_CASE("local aggregation on nodes:N:G: each node reduces inside, its first rank pushes once") {
    // one server, rank 0 (node 0's first rank): a gather and a broadcast inside every node
    // (G-1 vectors through the first rank's device link), N-1 pushes and pulls through NICs
    const double in_alpha = 1e-6, in_B = 100e9, x_alpha = 5e-6, x_B = 12.5e9;
    for (const auto& [nodes, g] : {std::pair{2, 2}, std::pair{3, 4}, std::pair{4, 2}}) {
      CAPTURE(nodes);
      CAPTURE(g);
      const int p = nodes * g;
      const size_t elements = 4096;
      const double n = elements * 4.0;
      const double want = 2 * (in_alpha + (g - 1) * n / in_B) + 2 * (x_alpha + (nodes - 1) * n / x_B);
      const auto run = run_servers(p, elements, fmt::format("nodes:{}:{}", nodes, g), [&](Scenario& s) {
        s.collective.parameter_server.local_aggregation = true;
      });
      CHECK(run.simulated_time == doctest::Approx(want).epsilon(1e-9).scale(0));
      CHECK(run.model_time == doctest::Approx(want).epsilon(1e-9).scale(0));
    }
  }
}
