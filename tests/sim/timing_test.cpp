// On an ideal network without contention, simulated time equals the alpha-beta formula of
// every registered algorithm, written out here from alpha and B (not taken from src/model);
// the double binary tree's closed form holds at powers of two (elsewhere it is a bound).
// The hierarchical allreduce also over blocks of group_size ranks and over the zones of
// topologies/two-zones.xml (messages between the zones share its inter-rack link), the
// parameter server with 1, 2, 3 and p servers. Every comparison is relative (Approx's
// scale(0)): doctest's default scale of 1 would allow epsilon x 1 s, more than these runs of
// microseconds differ by.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <string>
#include <tuple>
#include <utility>

#include "algorithms/registry.hpp"
#include "sim/simulation.hpp"
#include "sim_harness.hpp"
#include "util/child_process.hpp"

using namespace collsim;
using collsim::testing::make_scenario;
using collsim::testing::simulate_in_child;

namespace {

const int timing_ps[] = {2, 3, 4, 7, 8, 16, 64};

int rounds_of(int p) { return static_cast<int>(std::ceil(std::log2(static_cast<double>(p)) - 1e-12)); }
int floor_log2(int p) { return static_cast<int>(std::floor(std::log2(static_cast<double>(p)) + 1e-12)); }
bool power_of_two(int p) { return (p & (p - 1)) == 0; }

// Heap tree: position x (1-based) sits at depth floor(log2 x) and took popcount(x) - 1
// turns to a second child; W is the largest depth + turns over the p positions.
int heap_weighted_depth(int p) {
  int w = 0;
  for (int x = 1; x <= p; ++x) w = std::max(w, floor_log2(x) + __builtin_popcount(static_cast<unsigned>(x)) - 1);
  return w;
}

// Recursive halving (reduce-scatter) or doubling (allgather) over p chunks of n/p bytes:
// fold and unfold the first 2 rem ranks, then one step per distance m = 1, 2, ..., pof2/2
// carrying m + min(rem, m) chunks (the windows of the folded pairs hold two).
double halving_or_doubling(int p, double n, double alpha, double B) {
  const int pof2 = 1 << floor_log2(p), rem = p - pof2;
  double t = rem > 0 ? (alpha + n / B) + (alpha + n / p / B) : 0;
  for (int m = 1; m < pof2; m *= 2) t += alpha + (m + std::min(rem, m)) * n / p / B;
  return t;
}

// n bytes per rank; alpha is a route's latency (two links), B a link's bandwidth.
// Returns -1 where the formula below is only an upper bound (double-binary-tree, p not a
// power of two).
double formula(Collective collective, const std::string& algorithm, int p, double n, double alpha, double B,
               double segment) {
  const int pof2 = 1 << floor_log2(p);
  switch (collective) {
    case Collective::allreduce:
      // the student slot's template (src/algorithms/student.cpp): a chain down to 0 and back
      if (algorithm == "student") return 2 * (p - 1) * (alpha + n / B);
      if (algorithm == "ring") return 2.0 * (p - 1) * (alpha + n / p / B);
      if (algorithm == "naive") return 2.0 * (alpha + (p - 1) * n / B);
      if (algorithm == "naive-binomial") return 2.0 * rounds_of(p) * (alpha + n / B);
      if (algorithm == "recursive-doubling") return (floor_log2(p) + (p == pof2 ? 0 : 2)) * (alpha + n / B);
      if (algorithm == "rabenseifner")
        return 2.0 * floor_log2(p) * alpha + 2.0 * (pof2 - 1) / pof2 * n / B + (p == pof2 ? 0 : 2 * (alpha + n / B));
      if (algorithm == "direct") return alpha + (p - 1) * n / B;
      // one zone and no group_size: one group, the ring's messages
      if (algorithm == "hierarchical") return 2.0 * (p - 1) * (alpha + n / p / B);
      // one server by default: the naive allreduce's flows
      if (algorithm == "parameter-server") return 2.0 * (alpha + (p - 1) * n / B);
      if (algorithm == "binary-tree") {
        const double k = n / segment;
        const double steps = p == 2 ? k : 2 * k - 2 + heap_weighted_depth(p);
        return 2 * steps * (alpha + segment / B);
      }
      if (algorithm == "double-binary-tree") {
        const double k = n / 2 / segment;  // segments per tree
        if (p == 2) return 2 * k * (alpha + segment / B);
        if (!power_of_two(p)) return -1;
        return 2 * (2 * k + 2 * floor_log2(p) - 3) * (alpha + segment / B);
      }
      break;
    case Collective::broadcast:
      if (algorithm == "student") return (p - 1) * (alpha + n / B);  // the template's chain from the root
      if (algorithm == "binomial") return rounds_of(p) * (alpha + n / B);
      if (algorithm == "flat") return alpha + (p - 1) * n / B;
      if (algorithm == "pipeline") {
        const double k = std::ceil(n / segment);
        return (p - 1 + k - 1) * (alpha + segment / B);
      }
      if (algorithm == "scatter-allgather") {
        // the root sends min(2^i, p - 2^i) chunks in round i, then p-1 ring steps
        double t = (p - 1) * (alpha + n / p / B);
        for (int m = 1; m < p; m *= 2) t += alpha + std::min(m, p - m) * n / p / B;
        return t;
      }
      break;
    case Collective::reduce:
      if (algorithm == "binomial") return rounds_of(p) * (alpha + n / B);
      if (algorithm == "flat") return alpha + (p - 1) * n / B;
      break;
    case Collective::reduce_scatter:
      if (algorithm == "ring") return (p - 1) * (alpha + n / p / B);
      if (algorithm == "recursive-halving") return halving_or_doubling(p, n, alpha, B);
      break;
    case Collective::allgather:
      if (algorithm == "ring") return (p - 1) * (alpha + n / p / B);
      if (algorithm == "recursive-doubling") return halving_or_doubling(p, n, alpha, B);
      break;
    case Collective::alltoall:  // blocks of n/p bytes, one per peer
      if (algorithm == "pairwise") return (p - 1) * (alpha + n / p / B);
      if (algorithm == "direct") return alpha + (p - 1) * n / p / B;
      break;
  }
  FAIL("no formula for " << collective_name(collective) << " " << algorithm);
  return 0;
}

// The double binary tree's bound for any p: D <= 2 ceil(log2 p) - 3 extra steps.
double double_tree_bound(int p, double n, double alpha, double B, double segment) {
  const double k = n / 2 / segment;
  return 2 * (2 * k + 2 * rounds_of(p) - 3) * (alpha + segment / B);
}

void check_timing(const std::string& topology, double link_latency, double bandwidth, bool cluster_file) {
  for (const AlgorithmInfo& algorithm : all_algorithms()) {
    if (algorithm.uses.nccl) continue;  // NCCL's run on GPUs, with NCCL's transport: nccl_test.cpp
    for (int p : timing_ps) {
      if (cluster_file && p > 64) continue;
      CAPTURE(collective_name(algorithm.collective));
      CAPTURE(algorithm.name);
      CAPTURE(p);
      // A size divisible by p and by the segment count, so that every chunk is equal.
      const size_t elements = static_cast<size_t>(p) * 512;
      Scenario s = make_scenario(algorithm.collective, algorithm.name, p, elements);
      if (!topology.empty()) s.topology = topology;
      const double n = static_cast<double>(elements * 4);
      s.collective.segment = n / 8;
      const auto run = simulate_in_child(s);
      REQUIRE_MESSAGE(run.exit_code == 0, run.error);
      const double alpha = 2 * link_latency;
      const double want = formula(algorithm.collective, algorithm.name, p, n, alpha, bandwidth, n / 8);
      if (want < 0) {
        // exact against the model's schedule depth, and below the bound written out here
        CHECK(run.simulated_time == doctest::Approx(run.model_time).epsilon(1e-6).scale(0));
        CHECK(run.simulated_time <= double_tree_bound(p, n, alpha, bandwidth, n / 8) * (1 + 1e-9));
        continue;
      }
      CHECK(run.simulated_time == doctest::Approx(want).epsilon(1e-6).scale(0));
      CHECK(run.model_time == doctest::Approx(want).epsilon(1e-6).scale(0));
    }
  }
}

// One 64 MiB run on star:p, its simulated time only (simulate_in_child would bring back
// every rank's buffer at its logical size: p x 64 MiB).
double time_64mib(Collective collective, const std::string& algorithm, int p) {
  const Scenario s = make_scenario(collective, algorithm, p, 16 * 1024 * 1024);
  const ChildOutcome outcome = run_in_child([&] {
    const SimResult result = run_simulation(s, PlanOptions{});
    if (!result.stall.empty() || result.results.size() != static_cast<size_t>(p)) return std::string("incomplete");
    return fmt::format("{:.17g}", result.simulated_time);
  });
  REQUIRE_MESSAGE(outcome.exit_code == 0, outcome.output);
  return std::stod(outcome.output);
}

// One run of `elements` float32 on star:p (or `topology`), with its scenario adjusted.
collsim::testing::ChildRun timed_run(const std::string& algorithm, int p, size_t elements,
                                     const std::function<void(Scenario&)>& adjust) {
  Scenario s = make_scenario(Collective::allreduce, algorithm, p, elements);
  adjust(s);
  auto run = simulate_in_child(s);
  REQUIRE_MESSAGE(run.exit_code == 0, run.error);
  return run;
}

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("hierarchical on star:p with group_size: 2(g-1)(alpha + n/(gB)) + 2(G-1)(alpha + n/(gGB))") {
    const double alpha = 2e-6, B = 10e9;
    // (p, g): G = p/g groups; g = p is one group (the ring), g = 1 a ring between single ranks
    const std::pair<int, int> shapes[] = {{4, 2}, {8, 2}, {8, 4}, {12, 3}, {12, 4}, {16, 4}, {16, 8}, {16, 16}, {16, 1}};
    for (const auto& [p, g] : shapes) {
      CAPTURE(p);
      CAPTURE(g);
      const size_t elements = static_cast<size_t>(p) * 512;  // every chunk and part equal
      const double n = static_cast<double>(elements) * 4;
      const int groups = p / g;
      const double want = 2.0 * (g - 1) * (alpha + n / g / B) + 2.0 * (groups - 1) * (alpha + n / g / groups / B);
      const auto run = timed_run("hierarchical", p, elements, [g](Scenario& s) { s.collective.group_size = g; });
      CHECK(run.simulated_time == doctest::Approx(want).epsilon(1e-6).scale(0));
      CHECK(run.model_time == doctest::Approx(want).epsilon(1e-6).scale(0));
    }
  }
  TEST_CASE("hierarchical over the two zones of two-zones.xml: the 8 rings between them share the inter-rack link") {
    // inside a zone: alpha 2 us, 10 GB/s; between: alpha 1 + 10 + 1 us, 1.25 GB/s per direction
    const double alpha = 2e-6, B = 10e9, alpha_between = 12e-6, B_between = 1.25e9;
    const size_t elements = 16 * 1024;
    const double n = static_cast<double>(elements) * 4;
    auto on_zones = [](int group_size) {
      return [group_size](Scenario& s) {
        s.topology = COLLSIM_SOURCE_DIR "/topologies/two-zones.xml";
        if (group_size > 0) s.collective.group_size = group_size;
      };
    };
    SUBCASE("groups from the zones: g = 8, G = 2, 8 messages on each half of the link") {
      const double want = 2.0 * 7 * (alpha + n / 8 / B) + 2.0 * 1 * (alpha_between + n / 16 / (B_between / 8));
      const auto run = timed_run("hierarchical", 16, elements, on_zones(0));
      CHECK(run.simulated_time == doctest::Approx(want).epsilon(1e-6).scale(0));
      CHECK(run.model_time == doctest::Approx(want).epsilon(1e-6).scale(0));
    }
    SUBCASE("group_size 4: G = 4 groups, each of the 4 rings crosses the link both ways once per step") {
      const double want = 2.0 * 3 * (alpha + n / 4 / B) + 2.0 * 3 * (alpha_between + n / 16 / (B_between / 4));
      const auto run = timed_run("hierarchical", 16, elements, on_zones(4));
      CHECK(run.simulated_time == doctest::Approx(want).epsilon(1e-6).scale(0));
      CHECK(run.model_time == doctest::Approx(want).epsilon(1e-6).scale(0));
    }
    SUBCASE("the ring over the same hosts pays the slow link at every step") {
      const double want = 2.0 * 15 * (alpha_between + n / 16 / B_between);
      const auto run = timed_run("ring", 16, elements, on_zones(0));
      CHECK(run.simulated_time == doctest::Approx(want).epsilon(1e-6).scale(0));
    }
  }
  TEST_CASE("rail:N:G: the ring is paced by its node crossings, hierarchical runs one inter-node ring per rail") {
    // rail:N:G:100GBps:20GBps:1us:3us[:OVERSUB]: NVLink 2 us / 100 GB/s inside a node; the
    // ring's crossings (GPU G-1 of node i to GPU 0 of node i+1) change rails: NIC, both
    // uplinks, NIC, 4 x 3 us; the N crossings of a step share each rail uplink (N x 20 GB/s
    // / OVERSUB). Hierarchical: reduce-scatter and allgather over NVLink, and G rings, one
    // per rail, over the same-rail NICs (2 x 3 us, 20 GB/s each, nothing shared).
    const double nv_alpha = 2e-6, nv_bw = 100e9, nic_lat = 3e-6, nic_bw = 20e9;
    const std::tuple<int, int, double> shapes[] = {{2, 4, 1}, {3, 4, 1}, {4, 2, 1}, {8, 8, 1}, {3, 5, 1}, {4, 4, 2}, {2, 3, 4}};
    for (const auto& [nodes, gpus, oversub] : shapes) {
      CAPTURE(nodes);
      CAPTURE(gpus);
      CAPTURE(oversub);
      const int p = nodes * gpus;
      const size_t elements = static_cast<size_t>(p) * 64;  // every chunk and part equal
      const double n = static_cast<double>(elements) * 4;
      const double crossing_bw = std::min(nic_bw, nodes * nic_bw / oversub / nodes);
      const double ring = 2.0 * (p - 1) * std::max(nv_alpha + n / p / nv_bw, 4 * nic_lat + n / p / crossing_bw);
      const double hierarchical =
          2.0 * (gpus - 1) * (nv_alpha + n / gpus / nv_bw) + 2.0 * (nodes - 1) * (2 * nic_lat + n / p / nic_bw);
      auto on_rail = [&, nodes = nodes, gpus = gpus, oversub = oversub](Scenario& s) {
        s.topology = fmt::format("rail:{}:{}:100GBps:20GBps:1us:3us:{}", nodes, gpus, oversub);
        s.nccl.gpu_cost = false;  // the links' alpha-beta: gpu_cost_test.cpp prices what a GPU adds
      };
      const auto ring_run = timed_run("ring", p, elements, on_rail);
      CHECK(ring_run.simulated_time == doctest::Approx(ring).epsilon(1e-9).scale(0));
      if (oversub == 1) CHECK(ring_run.model_time == doctest::Approx(ring).epsilon(1e-9).scale(0));
      const auto hierarchical_run = timed_run("hierarchical", p, elements, on_rail);
      CHECK(hierarchical_run.simulated_time == doctest::Approx(hierarchical).epsilon(1e-9).scale(0));
      CHECK(hierarchical_run.model_time == doctest::Approx(hierarchical).epsilon(1e-9).scale(0));
      // the same groups given as blocks of G ranks: the same scheme, the same time
      const auto blocks = timed_run("hierarchical", p, elements, [&, gpus = gpus](Scenario& s) {
        on_rail(s);
        s.collective.group_size = gpus;
      });
      CHECK(blocks.simulated_time == hierarchical_run.simulated_time);
    }
  }
  TEST_CASE("rail:8:8 (DGX H100 links): hierarchical beats the ring by the factor of the two formulas") {
    const double nv_alpha = 1e-6, nv_bw = 450e9, nic_lat = 2e-6, nic_bw = 50e9;
    const int nodes = 8, gpus = 8, p = 64;
    const size_t elements = 64 * 1024;
    const double n = 1024.0 * 1024 * 1024;  // 1 GiB carried as 65536 elements
    const double ring = 2.0 * (p - 1) * (4 * nic_lat + n / p / nic_bw);
    const double hierarchical =
        2.0 * (gpus - 1) * (nv_alpha + n / gpus / nv_bw) + 2.0 * (nodes - 1) * (2 * nic_lat + n / p / nic_bw);
    auto on_rail = [&](Scenario& s) {
      s.topology = "rail:8:8";
      s.collective.size = n;
      s.collective.carried_elements = elements;
      s.nccl.gpu_cost = false;  // the links' alpha-beta: gpu_cost_test.cpp prices what a GPU adds
    };
    const auto ring_run = timed_run("ring", p, elements, on_rail);
    const auto hierarchical_run = timed_run("hierarchical", p, elements, on_rail);
    CHECK(ring_run.simulated_time == doctest::Approx(ring).epsilon(1e-9).scale(0));
    CHECK(hierarchical_run.simulated_time == doctest::Approx(hierarchical).epsilon(1e-9).scale(0));
    MESSAGE("ring " << ring << " s, hierarchical " << hierarchical << " s, factor " << ring / hierarchical);
    CHECK(ring_run.simulated_time / hierarchical_run.simulated_time == doctest::Approx(ring / hierarchical).epsilon(1e-9).scale(0));
    CHECK(ring / hierarchical > 3);
  }
  TEST_CASE("rail:N:G with k channels: the ring's crossings leave through k NICs, hierarchical is unchanged") {
    // Channel c turns every node's ring by c GPUs: its crossings go from GPU c-1 of node i to
    // GPU c of node i+1 (NIC, uplink of rail c-1, uplink of rail c, NIC: 4 x 3 us), so for
    // k <= G each NIC and each rail uplink carries one channel: N flows on N x 20 GB/s /
    // OVERSUB each. Messages are n/(kp). Inside a node a GPU's NVLink port carries the
    // channels whose next GPU is in the node: k of them, or G-1 when k = G.
    const double nv_alpha = 2e-6, nv_bw = 100e9, nic_lat = 3e-6, nic_bw = 20e9;
    // nodes, gpus, oversub, channels: NIC-bound, and NVLink-bound (8 x 8, k = 8: 7 flows)
    const std::tuple<int, int, double, int> shapes[] = {{2, 4, 1, 2}, {3, 4, 1, 4}, {4, 2, 1, 2}, {8, 8, 1, 8},
                                                        {3, 5, 1, 3}, {4, 4, 2, 4}, {2, 8, 1, 4}, {2, 6, 1, 5}};
    for (const auto& [nodes, gpus, oversub, k] : shapes) {
      CAPTURE(nodes);
      CAPTURE(gpus);
      CAPTURE(oversub);
      CAPTURE(k);
      const int p = nodes * gpus;
      const size_t elements = static_cast<size_t>(p) * static_cast<size_t>(k) * 64;  // every slice and chunk equal
      const double n = static_cast<double>(elements) * 4, b = n / k / p;
      const double crossing_bw = std::min(nic_bw, nic_bw / oversub);
      const int nvlink_flows = k < gpus ? k : gpus - 1;
      const double ring =
          2.0 * (p - 1) * std::max(nv_alpha + nvlink_flows * b / nv_bw, 4 * nic_lat + b / crossing_bw);
      const double hierarchical =
          2.0 * (gpus - 1) * (nv_alpha + n / gpus / nv_bw) + 2.0 * (nodes - 1) * (2 * nic_lat + n / p / nic_bw);
      auto on_rail = [&, nodes = nodes, gpus = gpus, oversub = oversub, k = k](Scenario& s) {
        s.topology = fmt::format("rail:{}:{}:100GBps:20GBps:1us:3us:{}", nodes, gpus, oversub);
        s.collective.channels = k;
        s.nccl.gpu_cost = false;  // the links' alpha-beta: gpu_cost_test.cpp prices what a GPU adds
      };
      const auto ring_run = timed_run("ring", p, elements, on_rail);
      CHECK(ring_run.simulated_time == doctest::Approx(ring).epsilon(1e-9).scale(0));
      CHECK(ring_run.model_time == doctest::Approx(ring).epsilon(1e-9).scale(0));
      const auto hierarchical_run = timed_run("hierarchical", p, elements, on_rail);
      CHECK(hierarchical_run.simulated_time == doctest::Approx(hierarchical).epsilon(1e-9).scale(0));
      CHECK(hierarchical_run.model_time == doctest::Approx(hierarchical).epsilon(1e-9).scale(0));
    }
  }
  TEST_CASE("channels on a star: k rings share each rank's link, the ring's time does not change") {
    const double alpha = 2e-6, B = 10e9;
    for (int p : {2, 3, 8})
      for (int k : {2, 4}) {
        CAPTURE(p);
        CAPTURE(k);
        const size_t elements = static_cast<size_t>(p) * static_cast<size_t>(k) * 128;
        const double n = static_cast<double>(elements) * 4;
        const double want = 2.0 * (p - 1) * (alpha + n / p / B);  // k messages of n/(kp) per link and step
        const auto run = timed_run("ring", p, elements, [k = k](Scenario& s) { s.collective.channels = k; });
        CHECK(run.simulated_time == doctest::Approx(want).epsilon(1e-9).scale(0));
        CHECK(run.model_time == doctest::Approx(want).epsilon(1e-9).scale(0));
      }
  }
  TEST_CASE("reduce_bandwidth R on star:p: each reduction of m bytes adds m/R on the reducing rank") {
    const double alpha = 2e-6, B = 10e9, R = 4e9;
    for (int p : {2, 3, 4, 8}) {
      CAPTURE(p);
      const size_t elements = static_cast<size_t>(p) * 1024;
      const double n = static_cast<double>(elements) * 4;
      const int log_p = rounds_of(p);
      // name, the formula: each step's transfers, then the receivers' reductions
      const std::pair<const char*, double> cases[] = {
          {"ring", 2.0 * (p - 1) * (alpha + n / p / B) + (p - 1) * n / p / R},
          {"direct", alpha + (p - 1) * n / B + (p - 1) * n / R},
          {"naive", 2.0 * (alpha + (p - 1) * n / B) + (p - 1) * n / R},
          {"naive-binomial", 2.0 * log_p * (alpha + n / B) + log_p * n / R},
      };
      for (const auto& [name, want] : cases) {
        CAPTURE(name);
        const auto run = timed_run(name, p, elements, [R](Scenario& s) { s.collective.reduce_bandwidth = R; });
        CHECK(run.simulated_time == doctest::Approx(want).epsilon(1e-9).scale(0));
        CHECK(run.model_time == doctest::Approx(want).epsilon(1e-9).scale(0));
      }
      if (power_of_two(p)) {
        const double want = log_p * (alpha + n / B + n / R);
        const auto run = timed_run("recursive-doubling", p, elements, [R](Scenario& s) { s.collective.reduce_bandwidth = R; });
        CHECK(run.simulated_time == doctest::Approx(want).epsilon(1e-9).scale(0));
        CHECK(run.model_time == doctest::Approx(want).epsilon(1e-9).scale(0));
      }
    }
    // hierarchical over blocks of g: the reduce-scatter inside (g-1 reductions of n/g) and
    // the rings' reduce-scatter between the G groups (G-1 of n/(gG))
    const int p = 8, g = 4, G = 2;
    const size_t elements = 8 * 1024;
    const double n = static_cast<double>(elements) * 4;
    const double want = 2.0 * (g - 1) * (alpha + n / g / B) + (g - 1) * n / g / R +
                        2.0 * (G - 1) * (alpha + n / g / G / B) + (G - 1) * n / g / G / R;
    const auto run = timed_run("hierarchical", p, elements, [&](Scenario& s) {
      s.collective.group_size = g;
      s.collective.reduce_bandwidth = R;
    });
    CHECK(run.simulated_time == doctest::Approx(want).epsilon(1e-9).scale(0));
    CHECK(run.model_time == doctest::Approx(want).epsilon(1e-9).scale(0));
  }
  TEST_CASE("reduce_bandwidth R, binary tree at p = 3 (followed rank by rank): the root reduces each of 2k segments") {
    // Root 0, leaves 1 and 2, k segments of S each per leaf. Up: the leaves' sends wait
    // for the root, which takes one segment per step (2k steps) and reduces it before it
    // posts the next receive; down: 2k sends, nothing reduced.
    const double alpha = 2e-6, B = 10e9, R = 4e9;
    const size_t elements = 3 * 1024;
    const double n = static_cast<double>(elements) * 4, k = 8, S = n / k;
    const double want = 2 * 2 * k * (alpha + S / B) + 2 * k * S / R;
    const auto run = timed_run("binary-tree", 3, elements, [&](Scenario& s) {
      s.collective.segment = S;
      s.collective.reduce_bandwidth = R;
    });
    CHECK(run.simulated_time == doctest::Approx(want).epsilon(1e-9).scale(0));
    CHECK(run.model_time == doctest::Approx(want).epsilon(1e-9).scale(0));
  }
  TEST_CASE("parameter-server on star:p: 2(alpha + (p-1) n/(SB)) for S = 1, 2, 3, p servers") {
    const double alpha = 2e-6, B = 10e9;
    for (int p : {2, 3, 4, 7, 8, 16}) {
      for (int servers : {1, 2, 3, p}) {
        if (servers > p) continue;
        CAPTURE(p);
        CAPTURE(servers);
        const size_t elements = static_cast<size_t>(p) * 512 * 3;  // shards equal for S = 1, 2, 3 and p
        const double n = static_cast<double>(elements) * 4;
        const double want = 2.0 * (alpha + (p - 1) * n / servers / B);
        const auto run = timed_run("parameter-server", p, elements, [servers](Scenario& s) { s.collective.servers = servers; });
        CHECK(run.simulated_time == doctest::Approx(want).epsilon(1e-6).scale(0));
        CHECK(run.model_time == doctest::Approx(want).epsilon(1e-6).scale(0));
      }
    }
  }
  TEST_CASE("simulated time equals the alpha-beta formula on generated stars") {
    check_timing("", 1e-6, 10e9, false);
  }
  TEST_CASE("simulated time equals the alpha-beta formula on a SimGrid <cluster> file") {
    check_timing(COLLSIM_SOURCE_DIR "/topologies/star-64.xml", 1e-6, 10e9, true);
  }
  TEST_CASE("a star generator's bandwidth and latency reach the simulation") {
    Scenario s = make_scenario(Collective::allreduce, "ring", 4, 4 * 1024);
    s.topology = "star:4:1GBps:5us";
    const auto run = simulate_in_child(s);
    REQUIRE(run.exit_code == 0);
    CHECK(run.simulated_time == doctest::Approx(2.0 * 3 * (10e-6 + 4096.0 / 1e9)).epsilon(1e-9).scale(0));
  }
  TEST_CASE("at 64 MiB, Rabenseifner's bandwidth term is the ring's: within 2% of it at p = 4, 16, 64") {
    const double n = 64.0 * 1024 * 1024, B = 10e9;
    for (int p : {4, 16, 64}) {
      CAPTURE(p);
      const double ring = time_64mib(Collective::allreduce, "ring", p);
      const double rabenseifner = time_64mib(Collective::allreduce, "rabenseifner", p);
      const double bandwidth_term = 2.0 * (p - 1) / p * n / B;
      MESSAGE("p=" << p << " ring " << ring << " s, rabenseifner " << rabenseifner << " s, 2(p-1)/p n/B "
                   << bandwidth_term << " s");
      CHECK(std::fabs(rabenseifner - ring) / ring < 0.02);
      // both within 2% of the bandwidth term: the latency terms (2(p-1) and 2 log2 p alphas) are small
      CHECK(ring / bandwidth_term < 1.02);
      CHECK(rabenseifner / bandwidth_term < 1.02);
    }
  }
  TEST_CASE("at 64 MiB, recursive doubling grows with log2 p: log2 p (alpha + n/B) at p = 4, 16, 64") {
    const double per_step = 2e-6 + 64.0 * 1024 * 1024 / 10e9;
    double previous = 0;
    for (int p : {4, 16, 64}) {
      CAPTURE(p);
      const double t = time_64mib(Collective::allreduce, "recursive-doubling", p);
      MESSAGE("p=" << p << " recursive doubling " << t << " s = " << t / per_step << " steps of alpha + n/B");
      CHECK(t == doctest::Approx(std::log2(p) * per_step).epsilon(1e-6).scale(0));
      CHECK(t > previous);
      previous = t;
    }
  }
}
