// collsim's own algorithms on GPUs pay what a GPU pays to run them on NCCL's send/recv: a
// kernel's launch per step (NCCL's Ring baseLat), held with each message a GPU receives (the
// launch of the group that uses it), NCCL's hwLat per hop in place of the links' latencies, a
// post per network message (getNetOverhead), the protocol's and the path's bandwidth efficiency. Oracles: NCCL's
// constants (src/graph/tuning.cc and topo.h, NCCL 2.25.1) and the datasheets' links put
// together by hand here.
#include <doctest/doctest.h>

#include <cmath>
#include <fmt/format.h>

#include "sim_harness.hpp"

using namespace collsim;
using collsim::testing::allreduce_on;
using collsim::testing::simulate_in_child;

namespace {

constexpr double us = 1e-6;
// tuning.cc: baseLat Ring {LL 6.6, LL128 14.0, Simple 8.4}; hwLat Ring NVLink {.6, 1.9, 3.4},
// NET {2.7, 4.0, 14.0}; Ring/LL's bus bandwidth x .5
constexpr double launch_ll = 6.6 * us, launch_simple = 8.4 * us;
constexpr double nvlink_ll = 0.6 * us, nvlink_simple = 3.4 * us, net_ll = 2.7 * us, net_simple = 14.0 * us;
// getNetOverhead (tuning.cc 2.25.1): 1 us a network post on an x86 Intel CPU (the DGX H100's
// Xeon, the rail presets'), x3 with Simple; a GPU's proxy posts one after another
constexpr double post_ll = 1.0 * us, post_simple = 3.0 * us;
// an H100's NVLink: 18 links of 25 GB/s each way (450 GB/s), NCCL counts 20.6 a link (topo.h)
constexpr double nvlink_rate = 450e9, nvlink_usable = 18 * 20.6e9 / 450e9;
// ConnectX-7 at 400 Gb/s (50 GB/s); InfiniBand carries 4096 bytes of payload in 4122 (IBTA)
constexpr double nic_rate = 50e9, ib_payload = 4096.0 / 4122.0;

double wire(double bytes, double efficiency) { return std::round(bytes / efficiency); }

// Simulates `s` in a child and checks its time against the hand-worked `expected` and the
// model's against the simulation's, both to 1e-9.
void check_simulated_and_model(const Scenario& s, double expected) {
  const auto run = simulate_in_child(s);
  REQUIRE_MESSAGE(run.exit_code == 0, run.error);
  CHECK(run.simulated_time == doctest::Approx(expected).epsilon(1e-9).scale(0));
  CHECK(run.model_time == doctest::Approx(run.simulated_time).epsilon(1e-9).scale(0));
}

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("collsim's ring on one DGX H100 pays NCCL's send/recv: 2(p-1) steps of wire + hwLat + a launch") {
    // 1 MiB over 8 GPUs: messages of 128 KiB, within LL's reach (NCCL_P2P_LL_THRESHOLD 16 KiB x
    // 32 channels per peer on NVLink: 512 KiB), half of a line's bytes are data; each step is a
    // group of its own, its kernel launched (LL's baseLat) once the step before is in
    Scenario s = allreduce_on("ring", "dgx-h100:1", 8, 1 << 20);
    const double ll_step = wire(128 * 1024, 0.5 * nvlink_usable) / nvlink_rate + nvlink_ll + launch_ll;
    check_simulated_and_model(s, 14 * ll_step);
    // 64 MiB: messages of 8 MiB, Simple
    s.collective.size = 64.0 * 1024 * 1024;
    const double simple_step = wire(8.0 * 1024 * 1024, nvlink_usable) / nvlink_rate + nvlink_simple + launch_simple;
    check_simulated_and_model(s, 14 * simple_step);
  }

  TEST_CASE("collsim's ring across two nodes of one GPU each: the NIC's hops pay NET's hwLat and IB's framing") {
    // rail:2:1, two H100 behind ConnectX-7 NICs; 16 MiB: blocks of 8 MiB, Simple; each of the
    // two steps posts its message across the network (3 us), then moves 8 MiB each way at
    // once, on the two directions of the NICs
    Scenario s = allreduce_on("ring", "rail:2:1", 2, 16 << 20);
    const double step = post_simple + wire(8.0 * 1024 * 1024, ib_payload) / nic_rate + net_simple + launch_simple;
    check_simulated_and_model(s, 2 * step);
  }

  TEST_CASE("collsim's direct allreduce on one DGX H100: 7 whole vectors sharing each NVLink, one step, one launch") {
    // 8 KiB over 8 GPUs: every GPU sends its whole vector to the 7 others at once, LL; a GPU's
    // 7 messages share its NVLink each way, and each is held a hop's latency and LL's launch
    // after its last byte (one step: one group, one launch)
    Scenario s = allreduce_on("direct", "dgx-h100:1", 8, 8192);
    const double exchange = 7 * wire(8192, 0.5 * nvlink_usable) / nvlink_rate + nvlink_ll;
    check_simulated_and_model(s, exchange + launch_ll);
  }

  TEST_CASE("collsim's direct allreduce on two DGX H100 at 8 B: the proxy posts 8 network sends one after another") {
    // rank r sends to r+1, r+2, ... (allreduce_direct.cpp): 7 on NVLink, which post nothing,
    // and 8 across the network at 1 us a post (LL: 8 B is within LL's reach), so its k-th
    // network message leaves at k us. Every rank of a node sends its k-th network message to
    // the same GPU (7 + k or k - 1), whose NIC's downlink the 8 share: 8 x 16 wire bytes (8 B
    // of data in LL's 16-byte line; IB's framing rounds 16.1 to 16) at 50 GB/s. The last is
    // held NET's hwLat LL 2.7 us and LL's launch after its last byte. Before the posts: 9.3 us.
    Scenario s = allreduce_on("direct", "dgx-h100:2", 16, 8);
    const double last_network = 8 * post_ll + 8 * wire(8, 0.5 * ib_payload) / nic_rate + net_ll;
    check_simulated_and_model(s, last_network + launch_ll);
    // the same on two DGX A100, whose AMD EPYC hosts post at 2 us (getNetOverhead) through
    // 200 Gb/s HDR NICs (25 GB/s)
    Scenario a = allreduce_on("direct", "dgx-a100:2", 16, 8);
    check_simulated_and_model(a, launch_ll + 8 * 2.0 * us + 8 * wire(8, 0.5 * ib_payload) / 25e9 + net_ll);
  }

  TEST_CASE("collsim's recursive doubling on two DGX H100 at 8 B: four steps, four launches") {
    // 16 GPUs: partners at distance 1, 2, 4 on NVLink (LL: 0.6 us), 8 across the network (one
    // post of 1 us, NET's LL 2.7 us); every step's message is held its hop and LL's 6.6 us
    // launch; 16 wire bytes a message: 32 bytes of LL lines at 450 GB/s x 20.6/25 on NVLink,
    // 16.1 -> 16 at 50 GB/s across
    Scenario s = allreduce_on("recursive-doubling", "dgx-h100:2", 16, 8);
    const double nvlink_step = wire(8, 0.5 * nvlink_usable) / nvlink_rate + nvlink_ll + launch_ll;
    const double network_step = post_ll + wire(8, 0.5 * ib_payload) / nic_rate + net_ll + launch_ll;
    check_simulated_and_model(s, 3 * nvlink_step + network_step);
  }

  TEST_CASE("nccl.gpu_cost=false: collsim's ring on a GPU preset pays its links alone, alpha-beta") {
    // dgx-h100:1: NVLink 450 GB/s and 0.5 us a link, two links a hop (the GPU's up, the other's down)
    Scenario s = allreduce_on("ring", "dgx-h100:1", 8, 1 << 20);
    s.nccl.gpu_cost = false;
    const auto run = simulate_in_child(s);
    REQUIRE_MESSAGE(run.exit_code == 0, run.error);
    CHECK(run.simulated_time == doctest::Approx(14 * (2 * 0.5 * us + 128 * 1024 / nvlink_rate)).epsilon(1e-9).scale(0));
  }

  TEST_CASE("one GPU: collsim's algorithms cost nothing, as NCCL's one-rank collective") {
    for (const char* algorithm : {"ring", "direct", "hierarchical"}) {
      CAPTURE(algorithm);
      const auto run = simulate_in_child(allreduce_on(algorithm, "dgx-h100:1", 1, 1 << 20));
      REQUIRE_MESSAGE(run.exit_code == 0, run.error);
      CHECK(run.simulated_time == 0);
    }
  }
}
