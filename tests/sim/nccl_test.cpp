// NCCL's algorithms with NCCL's transport, against hand-worked times: NCCL's constants
// (tuning.cc 2.25.1) and the datasheets' links put together by hand here, the simulation
// run on the GPU presets; and the cost model against the simulation on them.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <tuple>
#include <fmt/format.h>

#include "algorithms/registry.hpp"
#include "sim_harness.hpp"

using namespace collsim;
using collsim::testing::allreduce_on;
using collsim::testing::make_scenario;
using collsim::testing::simulate_in_child;

namespace {

constexpr double us = 1e-6;
constexpr double nvlink_factor = 25.0 / 20.6;  // H100: the datasheet's 25 GB/s per link, NCCL's 20.6

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("NCCL's ring on one DGX H100: base latency + 2(p-1) hops, each hwLat + its chunk") {
    // LL, one channel, 8 KiB over 8 ranks: chunks of 1 KiB; a hop holds the message 0.6 us
    // (hwLat NVLink Ring/LL) after it moved at LL's 141 GB/s ceiling (Hopper, one node)
    Scenario s = allreduce_on("nccl-ring", "dgx-h100:1", 8, 8192);
    s.nccl.proto = nccl::Proto::ll;
    s.nccl.channels = 1;
    const auto ll = simulate_in_child(s);
    REQUIRE_MESSAGE(ll.exit_code == 0, ll.error);
    const double wire = std::round(1024 * 2 * nvlink_factor), ll_rate = 141e9 * 2 * nvlink_factor;
    CHECK(ll.simulated_time == doctest::Approx(6.6 * us + 14 * (0.6 * us + wire / ll_rate)).epsilon(1e-9).scale(0));
    CHECK(ll.model_time == doctest::Approx(ll.simulated_time).epsilon(1e-9).scale(0));
    // Simple, one channel, 64 MiB: chunks of 8 MiB at the NVLink's 450 GB/s, 3.4 us a hop,
    // 8.4 us base latency
    s.collective.size = 64.0 * 1024 * 1024;
    s.nccl.proto = nccl::Proto::simple;
    const auto simple = simulate_in_child(s);
    REQUIRE_MESSAGE(simple.exit_code == 0, simple.error);
    const double chunk = std::round(8.0 * 1024 * 1024 * nvlink_factor);
    CHECK(simple.simulated_time == doctest::Approx(8.4 * us + 14 * (3.4 * us + chunk / 450e9)).epsilon(1e-9).scale(0));
  }

  TEST_CASE("NCCL's ring: the model prices the simulation exactly on the GPU presets") {
    // rings across nodes through PXN, every protocol, channels from the tuner and forced,
    // nodes of unequal size (10 ranks on rail:3:4)
    struct Case {
      const char* topology;
      int p;
      double bytes;
      std::optional<nccl::Proto> proto;
      std::optional<int> channels;
    };
    const Case cases[] = {{"dgx-h100:2", 16, 8, {}, {}},
                          {"dgx-h100:2", 16, 1 << 20, nccl::Proto::ll128, {}},
                          {"dgx-h100:2", 16, 64 << 20, nccl::Proto::simple, 3},
                          {"dgx-a100:2:roce200", 16, 1 << 20, {}, {}},
                          {"rail:3:4", 10, 1 << 16, nccl::Proto::ll, 4},
                          {"gb200-nvl72:1", 72, 1 << 20, {}, {}}};
    for (const Case& c : cases) {
      Scenario s = allreduce_on("nccl-ring", c.topology, c.p, c.bytes);
      s.collective.carried_elements = 64 * static_cast<uint64_t>(c.p);
      s.nccl.proto = c.proto;
      s.nccl.channels = c.channels;
      CAPTURE(fmt::format("{} p={} {} B", c.topology, c.p, c.bytes));
      const auto run = simulate_in_child(s);
      REQUIRE_MESSAGE(run.exit_code == 0, run.error);
      CHECK(run.model_time == doctest::Approx(run.simulated_time).epsilon(1e-9).scale(0));
    }
  }

  TEST_CASE("NCCL's NVLS on one DGX H100: one chunk up, its slices down, reduced slices up, the chunk down") {
    // 64 KiB fits one chunk (NVLS's 128 KiB x 8 channels): four NVLink transfers one after
    // another, each at the port's 450 GB/s with the wire bytes of NVLink (25 / 20.6) and of
    // NVLS (1 / 0.85, nvlsEfficiency, Hopper), after NVLS's 25 us NVLink latency (hwLat)
    Scenario s = allreduce_on("nccl-nvls", "dgx-h100:1", 8, 65536);
    const auto run = simulate_in_child(s);
    REQUIRE_MESSAGE(run.exit_code == 0, run.error);
    const double factor = nvlink_factor / 0.85;
    const double chunk = std::round(65536 * factor), slice = std::round(8192 * factor);
    CHECK(run.simulated_time == doctest::Approx(25 * us + (2 * chunk + 2 * slice) / 450e9).epsilon(1e-9).scale(0));
    CHECK(run.model_time == doctest::Approx(run.simulated_time).epsilon(1e-9).scale(0));
  }

  TEST_CASE("NCCL's CollNet on two nodes of two H100 whose InfiniBand switches reduce (SHARP): one chunk by hand") {
    // CollNetDirect, one channel, 64 KiB: one chunk of 2 heads x 32 KiB (computeColl halves the
    // 512 KiB step to 32 KiB). Each GPU sends its mate's 32 KiB slice over NVLink (3.7 us,
    // hwLat NVLink CollNetDirect), its node's sum of its own slice to its rail's switch through
    // its NIC (400 Gb/s; InfiniBand's 4122 / 4096 wire bytes, CollNetDirect's .85 on Hopper;
    // half of the network's 31 us each way), gets the sum over both nodes back, and sends it
    // to its mate; first 2 x (2 - 1) x 0.4 us of arity serialisation (tuning.cc 2.25.1).
    Scenario s = allreduce_on("nccl-collnet-direct", "rail:2:2:h100:ndr-sharp", 4, 65536);
    s.nccl.channels = 1;
    const auto direct = simulate_in_child(s);
    REQUIRE_MESSAGE(direct.exit_code == 0, direct.error);
    const double nvlink = std::round(32768 * nvlink_factor) / 450e9;
    const double up = std::round(32768 * 4122.0 / 4096 / 0.85) / 50e9;
    CHECK(direct.simulated_time == doctest::Approx(0.8 * us + 2 * (3.7 * us + nvlink) + 2 * (15.5 * us + up)).epsilon(1e-9).scale(0));
    CHECK(direct.model_time == doctest::Approx(direct.simulated_time).epsilon(1e-9).scale(0));
    // CollNetChain, one channel, 32 KiB: one chunk (256 KiB halved to 32 KiB); GPU 1 sends it to
    // GPU 0, the chain's head (2.8 us on NVLink), which sends the node's sum to its rail's switch
    // (15 us each way, no .85) and the result back to GPU 1
    Scenario c = allreduce_on("nccl-collnet-chain", "rail:2:2:h100:ndr-sharp", 4, 32768);
    c.nccl.channels = 1;
    const auto chain = simulate_in_child(c);
    REQUIRE_MESSAGE(chain.exit_code == 0, chain.error);
    const double hop = std::round(32768 * nvlink_factor) / 450e9, net = std::round(32768 * 4122.0 / 4096) / 50e9;
    CHECK(chain.simulated_time == doctest::Approx(2 * (2.8 * us + hop) + 2 * (15 * us + net)).epsilon(1e-9).scale(0));
    CHECK(chain.model_time == doctest::Approx(chain.simulated_time).epsilon(1e-9).scale(0));
  }

  TEST_CASE("NCCL's tree at 8 bytes: NCCL's latency, baseLat + 2 ((ppn - 1) intra + log2(nodes) inter)") {
    // Tree/LL (the tuner's choice): 6.8 us + 2 (7 x 0.6 + log2(N) x 5.0) us (tuning.cc 2.25.1);
    // 8 bytes add well under 0.01 us of transfers
    for (const auto& [topology, p, nodes] : {std::tuple{"dgx-h100:2", 16, 2}, std::tuple{"dgx-h100:4", 32, 4}}) {
      CAPTURE(topology);
      Scenario s = allreduce_on("nccl-tree", topology, p, 8);
      s.nccl.proto = nccl::Proto::ll;
      const auto run = simulate_in_child(s);
      REQUIRE_MESSAGE(run.exit_code == 0, run.error);
      const double latency = (6.8 + 2 * (7 * 0.6 + std::log2(nodes) * 5.0)) * us;
      CHECK(run.simulated_time > latency);
      CHECK(run.simulated_time < latency + 0.01 * us);
      CHECK(run.model_time == doctest::Approx(run.simulated_time).epsilon(1e-9).scale(0));
    }
  }

  TEST_CASE("NCCL's tree passes each chunk on cut-through: a chain of h hops costs h hop latencies + its bytes once") {
    // Tree/Simple on one node of 8 H100, one channel: a chain 0 -> 7, 7 hops up and 7 down, in
    // chunks of 32 KiB (computeColl: 512 KiB halved while fewer than 8 x depth 7, 4 x 7, 7 chunks).
    // Each chunk's hop is a head (its data, priced 0 bytes: the hop's hwLat, 4 us) that the next
    // rank passes on at once; each hop's bytes stream in one body at the lane's ceiling, 38.7
    // GB/s (perChMaxTreeBws, Hopper, one node) shared by the lane's up and down streams: 19.35
    // GB/s. The last hop's body starts 13 hop latencies after the first head, and is held a hop
    // latency after its last byte: baseLat 8.4 us + 14 x 4 us + the lane's bytes at 19.35 GB/s,
    // whatever the chunks. Store and forward would cost (C + 13) x (4 us + a chunk's time).
    const double wire_factor = nvlink_factor / 0.92;  // NCCL's Tree refinement (tuning.cc 2.25.1)
    for (const int chunks : {1, 4, 64}) {
      CAPTURE(chunks);
      const double bytes = chunks * 32768.0;
      Scenario s = allreduce_on("nccl-tree", "rail:1:8:h100:ndr", 8, bytes);
      s.nccl.proto = nccl::Proto::simple;
      s.nccl.channels = 1;
      const auto run = simulate_in_child(s);
      REQUIRE_MESSAGE(run.exit_code == 0, run.error);
      const double body = std::round(bytes * wire_factor) / (38.7e9 / 2 * wire_factor);
      CHECK(run.simulated_time == doctest::Approx(8.4 * us + 14 * 4 * us + body).epsilon(1e-9).scale(0));
      CHECK(run.model_time == doctest::Approx(run.simulated_time).epsilon(1e-9).scale(0));
    }
  }

  TEST_CASE("NCCL's tree runs each rank's reduce up and broadcast down apart (runTreeSplit): NCCL's latency on 4 lanes") {
    // Tree/Simple on two DGX H100 at 8 bytes: baseLat 8.4 us + 2 (7 x 4.0 + 1 x 14) us = 92.4 us
    // (tuning.cc 2.25.1), whatever the lanes. With 4 and 8 lanes the chains start at GPU 0 and
    // GPU 1 of each node, so a GPU is a chain's tail in one lane and its head's neighbour in
    // another: run as one sequence of steps (a hop across nodes counted as 8 NVLink hops where
    // Simple's is 3.5) its chunks up waited for another lane's chunks and it took 106.4 us; its
    // streams apart, as NCCL's runTreeSplit (src/device/all_reduce.h, 2.25.1) runs them, pass
    // every chunk on as soon as it is in
    for (const int lanes : {1, 2, 4, 8}) {
      CAPTURE(lanes);
      Scenario s = allreduce_on("nccl-tree", "dgx-h100:2", 16, 8);
      s.nccl.proto = nccl::Proto::simple;
      s.nccl.channels = lanes;
      const auto run = simulate_in_child(s);
      REQUIRE_MESSAGE(run.exit_code == 0, run.error);
      const double latency = (8.4 + 2 * (7 * 4.0 + 14.0)) * us;
      CHECK(run.simulated_time > latency);
      CHECK(run.simulated_time < latency + 0.01 * us);
      CHECK(run.model_time == doctest::Approx(run.simulated_time).epsilon(1e-9).scale(0));
    }
  }

  TEST_CASE("NCCL's tree, two streams per rank, 4 lanes of few chunks: latency + a lane's bytes once, by hand") {
    // Tree/Simple on 2 nodes of 2 H100 (rail:2:2:h100:ndr), 4 channels = 4 lanes: lanes 0 and 1
    // headed by GPU 0 of each node (tree 0 rooted at node 0, tree 1 its mirror), lanes 2 and 3
    // by GPU 1. In every lane: the tail sends its chunks up at once, its head has them 4 us later
    // (Tree/Simple NVLink hwLat) and the child node's head passes them across (14 us, network) to
    // the root, which sends them down at 18 us; the child head has them at 32 us, its tail at 36
    // us. A GPU is a tail in two lanes and a head in the two others: its streams apart, no chunk
    // waits for another lane's. Each hop's bytes stream in one body at the lane's share of NCCL's
    // ceiling, 4 x 41.4 GB/s (perChMaxTreeBws, Hopper, 2 nodes) / (2 x 4 lanes) = 20.7 GB/s
    // (not the NIC's 50 GB/s: two bodies a direction at 20.7 x 1.006 / 0.92); the last, to a
    // tail, starts at 32 us and is held 4 us after its last byte:
    // 8.4 us + 36 us + a lane's slice at 20.7 GB/s, for 1 to several chunks of the slice.
    // (Run as one sequence, the tails' chunks up waited 4 us each for their own lanes' heads'
    // chunks: 141.06 us at 4 MiB, here 95.06.)
    const double wire = nvlink_factor / 0.92;  // the last hop, on NVLink (Tree's x.92, tuning.cc)
    for (const double bytes : {65536.0, 1048576.0, 4194304.0}) {
      CAPTURE(bytes);
      Scenario s = allreduce_on("nccl-tree", "rail:2:2:h100:ndr", 4, bytes);
      s.nccl.proto = nccl::Proto::simple;
      s.nccl.channels = 4;
      const auto run = simulate_in_child(s);
      REQUIRE_MESSAGE(run.exit_code == 0, run.error);
      const double slice = bytes / 4, body = std::round(slice * wire) / (4 * 41.4e9 / 8 * wire);
      CHECK(run.simulated_time == doctest::Approx((8.4 + 36) * us + body).epsilon(1e-9).scale(0));
      CHECK(run.model_time == doctest::Approx(run.simulated_time).epsilon(1e-9).scale(0));
    }
  }

  TEST_CASE("NCCL's tree, NVLS and NVLSTree: the model prices the simulation exactly") {
    struct Case {
      const char* algorithm;
      const char* topology;
      int p;
      double bytes;
      std::optional<nccl::Proto> proto;
    };
    const Case cases[] = {{"nccl-tree", "dgx-h100:2", 16, 64 << 20, nccl::Proto::ll128},
                          {"nccl-tree", "dgx-a100:2", 16, 1 << 20, nccl::Proto::simple},
                          {"nccl-tree", "rail:3:4", 12, 1 << 16, nccl::Proto::ll},
                          {"nccl-nvls", "dgx-h100:1", 8, 8 << 20, {}},
                          {"nccl-nvls-tree", "dgx-h100:2", 16, 4 << 20, {}},
                          {"nccl-nvls-tree", "dgx-h100:3", 24, 1 << 20, {}},
                          // many chunks: the hops across nodes waited for later (fifo - 1 steps)
                          {"nccl-nvls-tree", "dgx-h100:2", 16, 64 << 20, {}},
                          {"nccl-tree", "dgx-h100:4", 32, 16 << 20, nccl::Proto::ll128},
                          // the rails' switches reduce: many chunks, every GPU a head or a chain's
                          {"nccl-collnet-direct", "dgx-h100:2:ndr-sharp", 16, 64 << 20, {}},
                          {"nccl-collnet-chain", "dgx-h100:2:ndr-sharp", 16, 64 << 20, {}},
                          {"nccl-collnet-chain", "rail:3:4:h100:ndr-sharp", 12, 1 << 20, {}}};
    for (const Case& c : cases) {
      Scenario s = allreduce_on(c.algorithm, c.topology, c.p, c.bytes);
      s.collective.carried_elements = 64 * static_cast<uint64_t>(c.p);
      s.nccl.proto = c.proto;
      CAPTURE(fmt::format("{} {} p={} {} B", c.algorithm, c.topology, c.p, c.bytes));
      const auto run = simulate_in_child(s);
      REQUIRE_MESSAGE(run.exit_code == 0, run.error);
      // to 1e-9, or to a few of SimGrid's clock steps (surf/precision 1e-12 s, engine_setup.cpp)
      CHECK(std::abs(run.model_time - run.simulated_time) <= std::max(1e-9 * run.simulated_time, 1e-11));
    }
  }
  TEST_CASE("One rank: every NCCL variant and collective takes no time (NCCL launches only a one-rank copy)") {
    // NCCL's taskAppend (src/enqueue.cc) hands a one-rank collective to ncclLaunchOneRank, a copy
    // of the input to the output (none in place): no tuner, no baseLat, no hop. Its send/recv
    // go to itself. Each variant and protocol, the sizes of a latency- and a bandwidth-bound run.
    struct Case {
      Collective kind;
      const char* algorithm;
      const char* topology;
      std::optional<nccl::Proto> proto;
    };
    const Case cases[] = {{Collective::allreduce, "nccl", "dgx-h100:1", {}},
                          {Collective::allreduce, "nccl-ring", "dgx-h100:1", nccl::Proto::ll},
                          {Collective::allreduce, "nccl-ring", "dgx-a100:2", nccl::Proto::simple},
                          {Collective::allreduce, "nccl-tree", "dgx-h100:2", nccl::Proto::ll128},
                          {Collective::allreduce, "nccl-nvls", "dgx-h100:1", {}},
                          {Collective::allreduce, "nccl-nvls-tree", "dgx-h100:2", {}},
                          {Collective::allreduce, "nccl-collnet-direct", "dgx-h100:2:ndr-sharp", {}},
                          {Collective::allreduce, "nccl-collnet-chain", "dgx-h100:2:ndr-sharp", {}},
                          {Collective::alltoall, "nccl", "dgx-h100:1", {}}};
    for (const Case& c : cases)
      for (const double bytes : {8.0, 64.0 * 1024 * 1024}) {
        Scenario s = make_scenario(c.kind, c.algorithm, 1, static_cast<size_t>(bytes / 4));
        s.topology = c.topology;
        s.nccl.proto = c.proto;
        CAPTURE(fmt::format("{} {} on {} {} B", collective_name(c.kind), c.algorithm, c.topology, bytes));
        const auto run = simulate_in_child(s);
        REQUIRE_MESSAGE(run.exit_code == 0, run.error);
        CHECK(run.simulated_time == 0);
        CHECK(run.model_time == 0);
        CHECK(run.messages == 0);
      }
  }

  TEST_CASE("NCCL's alltoall on one DGX H100: every peer at once, each block in parts, one Ring hop's latency") {
    // Each GPU sends 7 blocks of n/8 over its NVLink port (450 GB/s each way) and receives 7:
    // all its messages share the port and end together, a Ring hop's hwLat after the kernel's
    // baseLat (NCCL's model prices no send/recv). 64 MiB: blocks of 8 MiB, Simple (above 32 x
    // 16 KiB), in 4 parts (nChannelsMin: 32 p2p channels / 8 ranks; 2 MiB <= 32 x 512 KiB).
    // 1 MiB: blocks of 128 KiB, LL (2 wire bytes per byte), 4 parts of 32 KiB.
    struct Case {
      double bytes, base_us, hop_us, part, protocol_factor;
    };
    for (const Case& c : {Case{64 << 20, 8.4, 3.4, 2 << 20, 1}, Case{1 << 20, 6.6, 0.6, 32 << 10, 2}}) {
      CAPTURE(c.bytes);
      Scenario s = make_scenario(Collective::alltoall, "nccl", 8, static_cast<size_t>(c.bytes / 4));
      s.topology = "dgx-h100:1";
      const auto run = simulate_in_child(s);
      REQUIRE_MESSAGE(run.exit_code == 0, run.error);
      CHECK(run.messages == 8 * 7 * 4);
      const double through_port = 7 * 4 * std::round(c.part * c.protocol_factor * nvlink_factor);
      CHECK(run.simulated_time == doctest::Approx((c.base_us + c.hop_us) * us + through_port / 450e9).epsilon(1e-9).scale(0));
      CHECK(run.model_time == doctest::Approx(run.simulated_time).epsilon(1e-9).scale(0));
    }
  }

  TEST_CASE("NCCL's alltoall: the model prices the simulation exactly, PXN across nodes and unequal nodes") {
    struct Case {
      const char* topology;
      int p;
      double bytes;
    };
    const Case cases[] = {{"dgx-h100:2", 16, 1 << 20}, {"dgx-h100:2", 16, 256 << 20}, {"dgx-a100:3", 24, 64 << 20},
                          {"rail:3:4", 10, 1 << 22}};
    for (const Case& c : cases) {
      Scenario s = make_scenario(Collective::alltoall, "nccl-alltoall", c.p, static_cast<size_t>(c.bytes / 4));
      s.topology = c.topology;
      s.collective.carried_elements = 64 * static_cast<uint64_t>(c.p);
      CAPTURE(fmt::format("{} p={} {} B", c.topology, c.p, c.bytes));
      const auto run = simulate_in_child(s);
      REQUIRE_MESSAGE(run.exit_code == 0, run.error);
      CHECK(std::abs(run.model_time - run.simulated_time) <= std::max(1e-9 * run.simulated_time, 1e-11));
    }
  }
}
