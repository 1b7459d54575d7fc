// NCCL's tuner and transport against hand-worked numbers: NCCL's formulas (tuning.cc 2.25.1)
// applied by hand to DGX systems, the datasheets' figures, the standards' framing.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "algorithms/nccl_p2p.hpp"
#include "nccl/p2p.hpp"
#include "nccl/transport.hpp"
#include "nccl/tuner.hpp"
#include "util/errors.hpp"

using namespace collsim;
using namespace collsim::nccl;

namespace {

// n nodes of g GPUs of a catalogued node (its GPU, NIC and CPU).
GpuSystem system_of(const std::string& gpu, const std::string& nic, const std::string& cpu, int nodes, int gpus) {
  std::vector<RankProperties> ranks;
  for (int i = 0; i < nodes; ++i)
    for (int j = 0; j < gpus; ++j) ranks.push_back({"node-" + std::to_string(i), gpu, nic, cpu});
  std::vector<std::string> switches(static_cast<size_t>(nodes), "nvswitch");
  if (find_nic_model(nic)->sharp) switches.insert(switches.end(), static_cast<size_t>(gpus), "sharp-switch");
  return describe_system(ranks, find_gpu_model(gpu)->nvlink_bandwidth(), switches, "test");
}

const Candidate& find(const std::vector<Candidate>& all, Algo algo, Proto proto) {
  for (const Candidate& c : all)
    if (c.algo == algo && c.proto == proto) return c;
  throw std::logic_error("no such candidate");
}

constexpr double gib = 1024.0 * 1024 * 1024;

}  // namespace

TEST_CASE("the catalogue: NVLink per GPU and direction, the fabrics' framing") {
  CHECK(find_gpu_model("h100")->nvlink_bandwidth() == 18 * 25e9);  // 900 GB/s both ways
  CHECK(find_gpu_model("a100")->nvlink_bandwidth() == 12 * 25e9);  // 600 GB/s both ways
  CHECK(find_gpu_model("b200")->nvlink_bandwidth() == 18 * 50e9);  // 1.8 TB/s both ways
  // InfiniBand: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 bytes per 4096; RoCE v2 82 per 4096
  CHECK(find_nic_model("ndr")->payload_efficiency() == doctest::Approx(4096.0 / 4122).epsilon(1e-12).scale(0));
  CHECK(find_nic_model("roce400")->payload_efficiency() == doctest::Approx(4096.0 / 4178).epsilon(1e-12).scale(0));
  CHECK(find_nic_model("ndr")->line_rate == 50e9);
  CHECK(find_nic_model("hdr")->line_rate == 25e9);
}

TEST_CASE("the channel search: 12 x 30 GB/s on one DGX H100, 12 x 20 on a DGX A100, 8 x 45 across H100 nodes") {
  // 18 x 20.6 = 370.8 GB/s of NVLink: 6 rings at 60 (7 x 60 = 420 does not fit), doubled at half speed
  const Graph h100 = search_graphs(system_of("h100", "ndr", "intel", 1, 8)).ring;
  CHECK(h100.channels == 12);
  CHECK(h100.bw_intra == 30.0);
  // 12 x 20 = 240: 6 at 40, doubled (compute capability 80 doubles below 50)
  const Graph a100 = search_graphs(system_of("a100", "hdr", "amd", 1, 8)).ring;
  CHECK(a100.channels == 12);
  CHECK(a100.bw_intra == 20.0);
  // across nodes: 48 fits the 50 GB/s NIC but only 7 x 48 the NVLink; 8 x 45 = 360 is more;
  // no doubling below 50 with more than 4 channels on compute capability 90
  const Graph two = search_graphs(system_of("h100", "ndr", "intel", 2, 8)).ring;
  CHECK(two.channels == 8);
  CHECK(two.bw_inter == 45.0);
  // A100 with 25 GB/s NICs: 8 x 24, not doubled (below 25)
  const Graph a100s = search_graphs(system_of("a100", "hdr", "amd", 2, 8)).ring;
  CHECK(a100s.channels == 8);
  CHECK(a100s.bw_inter == 24.0);
}

TEST_CASE("NCCL's predicted times: Ring/Simple on one DGX H100 at 1 GiB, Tree/LL on two at 8 bytes") {
  // busBw 12 x 30 = 360, algBw 360 x 8/14; latency 8.4 + 14 x 3.4 = 56 us
  const auto one = price_allreduce(system_of("h100", "ndr", "intel", 1, 8), gib, {});
  const Candidate& ring = find(one, Algo::ring, Proto::simple);
  CHECK(ring.latency_us == doctest::Approx(56.0).epsilon(1e-9).scale(0));
  CHECK(ring.time_us == doctest::Approx(56.0 + gib / (1000 * 360.0 * 8 / 14)).epsilon(1e-9).scale(0));
  // 6.8 + 2 x ((16/2 - 1) x 0.6 + log2(2) x 5.0) = 25.2 us
  const auto two = price_allreduce(system_of("h100", "ndr", "intel", 2, 8), 8, {});
  CHECK(find(two, Algo::tree, Proto::ll).latency_us == doctest::Approx(25.2).epsilon(1e-9).scale(0));
  // Ring/LL across 2 nodes: 6.6 + (30 - 2) x max(0.6, 1.0 Intel's net overhead) + 2 x 2.7 = 40.0
  CHECK(find(two, Algo::ring, Proto::ll).latency_us == doctest::Approx(40.0).epsilon(1e-9).scale(0));
  // Ring/Simple across nodes pays the plateau (x1.4) once a channel's share reaches 64 bytes
  const auto large = price_allreduce(system_of("h100", "ndr", "intel", 2, 8), gib, {});
  CHECK(find(large, Algo::ring, Proto::simple).latency_us ==
        doctest::Approx(1.4 * (8.4 + 28 * 3.4 + 2 * 14.0)).epsilon(1e-9).scale(0));
}

TEST_CASE("what NCCL would not run: NVLS without NVLink SHARP, NVLSTree on one node, CollNet without SHARP") {
  const auto a100 = price_allreduce(system_of("a100", "hdr", "amd", 1, 8), gib, {});
  CHECK_FALSE(find(a100, Algo::nvls, Proto::simple).disabled.empty());
  CHECK_FALSE(find(a100, Algo::nvls_tree, Proto::simple).disabled.empty());
  CHECK_FALSE(find(a100, Algo::collnet_direct, Proto::simple).disabled.empty());
  CHECK_FALSE(find(a100, Algo::collnet_chain, Proto::simple).disabled.empty());
  CHECK(find(a100, Algo::ring, Proto::ll128).disabled.empty());
  const auto h100 = price_allreduce(system_of("h100", "ndr", "intel", 1, 8), gib, {});
  CHECK(find(h100, Algo::nvls, Proto::simple).disabled.empty());
  CHECK_FALSE(find(h100, Algo::nvls, Proto::ll).disabled.empty());  // NVLS runs Simple only
  const auto sharp = price_allreduce(system_of("h100", "ndr-sharp", "intel", 2, 8), gib, {});
  CHECK(find(sharp, Algo::collnet_direct, Proto::simple).disabled.empty());
  CHECK(find(sharp, Algo::collnet_chain, Proto::simple).disabled.empty());
  CHECK_FALSE(find(sharp, Algo::collnet_chain, Proto::ll).disabled.empty());  // CollNet runs Simple only
}

TEST_CASE("CollNet in NCCL's model: two DGX H100 whose InfiniBand switches reduce (tuning.cc 2.25.1)") {
  const auto two = price_allreduce(system_of("h100", "ndr-sharp", "intel", 2, 8), gib, {});
  // the graph is the ring's, 8 x 45 GB/s; bw = bwIntra for CollNet. CollNetDirect: factor =
  // ppn / nCh = 8 / 8 = 1, so busBw 8 x 45 x .85 (compute capability 90) = 306, algBw / 2 = 153;
  // latency 2 x (min(1, 7) x 3.7 + 7 x 0.4) + 31 = 44 us
  const Candidate& direct = find(two, Algo::collnet_direct, Proto::simple);
  CHECK(direct.bandwidth_gbs == doctest::Approx(153.0).epsilon(1e-12).scale(0));
  CHECK(direct.latency_us == doctest::Approx(44.0).epsilon(1e-12).scale(0));
  CHECK(direct.time_us == doctest::Approx(44.0 + gib / (1000 * 153.0)).epsilon(1e-12).scale(0));
  // CollNetChain: busBw 8 x 45 = 360, algBw 180; latency 2 x 7 x 2.8 + 30 = 69.2 us
  const Candidate& chain = find(two, Algo::collnet_chain, Proto::simple);
  CHECK(chain.bandwidth_gbs == doctest::Approx(180.0).epsilon(1e-12).scale(0));
  CHECK(chain.latency_us == doctest::Approx(69.2).epsilon(1e-12).scale(0));
  // one GPU per node: the tree's network latency (14 us) for every algorithm; Direct's factor
  // = 1 / 8 -> 1 / 8 - (1 / 8 - 1) / 2 = 0.5625
  const auto single = price_allreduce(system_of("h100", "ndr-sharp", "intel", 4, 1), gib, {});
  CHECK(find(single, Algo::collnet_direct, Proto::simple).latency_us == doctest::Approx(14.0).epsilon(1e-12).scale(0));
  CHECK(find(single, Algo::collnet_chain, Proto::simple).latency_us == doctest::Approx(14.0).epsilon(1e-12).scale(0));
}

TEST_CASE("CollNet's transport: SHARP round trips at half the network's hwLat each way, .85 for CollNetDirect") {
  const GpuSystem h100 = system_of("h100", "ndr-sharp", "intel", 2, 8);
  std::vector<EndpointKind> kinds(16, EndpointKind::gpu);
  kinds.push_back(EndpointKind::sharp_switch);
  const Transport direct(h100, {Algo::collnet_direct, Proto::simple, 8, 1}, kinds);
  CHECK(direct.price(0, 16).hop_latency == doctest::Approx(15.5e-6).epsilon(1e-12).scale(0));
  CHECK(direct.price(16, 0).hop_latency == doctest::Approx(15.5e-6).epsilon(1e-12).scale(0));
  CHECK(direct.price(0, 1).hop_latency == doctest::Approx(3.7e-6).epsilon(1e-12).scale(0));
  CHECK(direct.price(0, 16).wire_factor == doctest::Approx(4122.0 / 4096 / 0.85).epsilon(1e-12).scale(0));
  CHECK(direct.price(0, 1).wire_factor == doctest::Approx(25.0 / 20.6).epsilon(1e-12).scale(0));
  CHECK(direct.collective_overhead() == doctest::Approx(2 * 7 * 0.4e-6).epsilon(1e-12).scale(0));  // arity serialisation
  const Transport chain(h100, {Algo::collnet_chain, Proto::simple, 8, 8}, kinds);
  CHECK(chain.price(0, 16).hop_latency == doctest::Approx(15e-6).epsilon(1e-12).scale(0));
  CHECK(chain.price(0, 1).hop_latency == doctest::Approx(2.8e-6).epsilon(1e-12).scale(0));
  CHECK(chain.price(0, 16).wire_factor == doctest::Approx(4122.0 / 4096).epsilon(1e-12).scale(0));
  CHECK(chain.collective_overhead() == 0);
}

TEST_CASE("CollNet's chunks (computeColl): Direct from 512 KiB over channels x heads, Chain from 256 KiB") {
  // Direct, 2 x 8, 16 channels, 8 heads, depth 2: 1 GiB / (128 x 512 KiB) = 16 < 128: 256 KiB
  // (32), 128 KiB stops (not above 131072); 64 loops is not below 16 either
  CHECK(pipeline_chunk_bytes(Algo::collnet_direct, Proto::simple, 1 << 30, 16, 16, 2) == 131072);
  // 8 GiB: 128 loops of 512 KiB, not below 128
  CHECK(pipeline_chunk_bytes(Algo::collnet_direct, Proto::simple, 8.0 * (1 << 30), 16, 16, 2) == 524288);
  // 16 MiB: 0 loops of 128 KiB (< 16): 64 KiB (2 loops < 16), 32 KiB (4 < 16, not above 32768)
  CHECK(pipeline_chunk_bytes(Algo::collnet_direct, Proto::simple, 16 << 20, 16, 16, 2) == 32768);
  // Chain, depth 8: 1 GiB / (16 x 256 KiB) = 256 loops, not below 512: 128 KiB (512 loops);
  // then 512 >= 64 and >= 8
  CHECK(pipeline_chunk_bytes(Algo::collnet_chain, Proto::simple, 1 << 30, 16, 16, 2) == 131072);
  // 64 MiB: 32 loops of 128 KiB < 64: 64 KiB (64 loops, not below 64), stops
  CHECK(pipeline_chunk_bytes(Algo::collnet_chain, Proto::simple, 64 << 20, 16, 16, 2) == 65536);
  CHECK(pipeline_chunk_bytes(Algo::collnet_chain, Proto::simple, 1 << 20, 16, 16, 2) == 32768);
}

namespace {
Forced forcing(std::optional<Algo> algo, std::optional<Proto> proto, std::optional<int> channels) {
  Forced forced;
  forced.algo = algo;
  forced.proto = proto;
  forced.channels = channels;
  return forced;
}
}  // namespace

TEST_CASE("forcing: nccl.algo and nccl.proto filter, an impossible one is refused in one line") {
  const GpuSystem a100 = system_of("a100", "hdr", "amd", 1, 8);
  const Choice forced = choose_allreduce(a100, gib, forcing(Algo::ring, Proto::ll, std::nullopt), "nccl.algo");
  CHECK(forced.chosen.algo == Algo::ring);
  CHECK(forced.chosen.proto == Proto::ll);
  CHECK_THROWS_AS(choose_allreduce(a100, gib, forcing(Algo::nvls, std::nullopt, std::nullopt), "nccl.algo"), InputError);
}

TEST_CASE("the channels NCCL runs: fewer for small sizes (bytes < channels x threads x threshold)") {
  const GpuSystem h100 = system_of("h100", "ndr", "intel", 1, 8);
  // Ring/LL: threshold 8 x nRanks = 64, 512 threads: 8 bytes keep one channel
  CHECK(choose_allreduce(h100, 8, forcing(Algo::ring, Proto::ll, std::nullopt), "test").channels == 1);
  // 1 GiB keeps all 24 compute channels (twice the search's 12)
  CHECK(choose_allreduce(h100, gib, forcing(Algo::ring, Proto::simple, std::nullopt), "test").channels == 24);
  CHECK(choose_allreduce(h100, gib, forcing(Algo::ring, Proto::simple, 5), "test").channels == 5);
}

TEST_CASE("the transport's prices: wire bytes, hop latencies, ceilings, base latency") {
  const GpuSystem h100 = system_of("h100", "ndr", "intel", 2, 8);
  std::vector<EndpointKind> kinds(16, EndpointKind::gpu);
  const Transport ll(h100, {Algo::ring, Proto::ll, 16, 8}, kinds);
  // LL: half of each line is flags; NVLink: NCCL counts 20.6 of the 25 GB/s of a link
  CHECK(ll.price(0, 1).wire_factor == doctest::Approx(2 * 25.0 / 20.6).epsilon(1e-12).scale(0));
  CHECK(ll.price(0, 8).wire_factor == doctest::Approx(2 * 4122.0 / 4096).epsilon(1e-12).scale(0));
  // multi-node ring: an NVLink hop costs max(0.6, Intel's 1.0 network overhead) us; a network hop 2.7
  CHECK(ll.price(0, 1).hop_latency == doctest::Approx(1.0e-6).epsilon(1e-12).scale(0));
  CHECK(ll.price(0, 8).hop_latency == doctest::Approx(2.7e-6).epsilon(1e-12).scale(0));
  CHECK(ll.collective_overhead() == doctest::Approx(6.6e-6).epsilon(1e-12).scale(0));
  // LL's ceiling (39 GB/s on 2 Intel nodes) shared by 8 rings, in wire bytes
  CHECK(ll.price(0, 1).rate_cap == doctest::Approx(39e9 / 8 * 2 * 25.0 / 20.6).epsilon(1e-12).scale(0));
  // Tree/LL128 on 2 nodes, 16 channels on 16 lanes: min(16 x 41.4 (perChMaxTreeBws), 16 x 36.7
  // (perChMaxTreeLL128Bws)) GB/s of bus bandwidth, shared by each lane's up and down streams
  const Transport tree(h100, {Algo::tree, Proto::ll128, 16, 16}, kinds);
  for (const int to : {1, 8})
    CHECK(tree.price(0, to).rate_cap / tree.price(0, to).wire_factor ==
          doctest::Approx(16 * 36.7e9 / (2 * 16)).epsilon(1e-12).scale(0));
  const Transport simple(h100, {Algo::ring, Proto::simple, 16, 8}, kinds);
  CHECK(std::isinf(simple.price(0, 1).rate_cap));
  CHECK(simple.price(0, 1).hop_latency == doctest::Approx(3.4e-6).epsilon(1e-12).scale(0));  // max(3.4, 3 x 1.0)
  // NVLS pays its NVLink latency once (25 us), its switch hops at NVLS's 0.85 of NCCL's NVLink
  kinds.push_back(EndpointKind::nvswitch);
  const Transport nvls(system_of("h100", "ndr", "intel", 1, 8), {Algo::nvls, Proto::simple, 8, 1}, kinds);
  CHECK(nvls.collective_overhead() == doctest::Approx(25e-6).epsilon(1e-12).scale(0));
  CHECK(nvls.price(0, 16).wire_factor == doctest::Approx(25.0 / 20.6 / 0.85).epsilon(1e-12).scale(0));
}

TEST_CASE("the tree correction: NCCL's table by log2(bytes / 64)") {
  CHECK(tree_correction(Proto::simple, 64) == .9);          // index 0
  CHECK(tree_correction(Proto::ll, 64 * 2048) == .5);       // index 11
  CHECK(tree_correction(Proto::simple, 64.0 * (1 << 22)) == .9);  // index 22, the last
  CHECK(tree_correction(Proto::simple, 64.0 * (1 << 23)) == 1.0);  // beyond the table
}

TEST_CASE("Tree/LL's chunk is its step and its FIFO holds NCCL_STEPS of them, as the ring's") {
  // LL's step: 8 lines x 512 threads x 16 B = 64 KiB of lines, 32 KiB of payload; the tree's
  // hops pass it on cut-through (nccl_trees.hpp), so it need not be cut into waves of lines
  CHECK(pipeline_chunk_bytes(Algo::tree, Proto::ll, 1 << 20, 16, 128, 16) == 32768);
  CHECK(fifo_chunks(Algo::tree, Proto::ll) == 8);
  CHECK(pipeline_chunk_bytes(Algo::ring, Proto::ll, 1 << 20, 16, 128, 16) == 32768);
  CHECK(fifo_chunks(Algo::ring, Proto::ll) == 8);
}

TEST_CASE("NCCL's chunks for the tree and NVLS shrink while a channel has too few of them (computeColl)") {
  // Tree/LL128, 2 nodes x 8, 16 channels, 8 MiB: nstepsLL128 = 1 + 1 + 0.8 = 2.8; 614400 B halved
  // while 8 MiB / (16 x chunk) < 22.4 and chunk > 131072: 307200, 153600 (3 loops), 76800; then
  // 6 loops >= 5.6 stops it: 76800 x 15/16 of payload
  CHECK(pipeline_chunk_bytes(Algo::tree, Proto::ll128, 8 << 20, 16, 16, 2) == 72000);
  // Tree/Simple, the same system, 64 MiB: depth 7 + 1; 512 KiB gives 8 loops < 64, 256 KiB 16,
  // 128 KiB stops (not above 131072); 32 loops is not below 32
  CHECK(pipeline_chunk_bytes(Algo::tree, Proto::simple, 64 << 20, 16, 16, 2) == 131072);
  // and 1 GiB keeps the 512 KiB step: 128 loops >= 64
  CHECK(pipeline_chunk_bytes(Algo::tree, Proto::simple, 1 << 30, 16, 16, 2) == 524288);
  // NVLS, one node of 8, 8 channels: 64 concurrent operations; 64 KiB is below 64 x 64 x 128 KiB,
  // 8 x 64 x 64 KiB and 2 x 64 x 32 KiB: 16 KiB; 1 GiB is not below 64 x 64 x 128 KiB = 512 MiB
  CHECK(pipeline_chunk_bytes(Algo::nvls, Proto::simple, 64 << 10, 8, 8, 1) == 16384);
  CHECK(pipeline_chunk_bytes(Algo::nvls, Proto::simple, 1 << 30, 8, 8, 1) == 131072);
  // NVLSTree, 2 nodes x 8, 16 channels: 128 operations; 1 GiB keeps 128 KiB (not below 4 x 128 x
  // 128 KiB = 64 MiB); 16 MiB is below it: 64 KiB, and not below 1 x 128 x 64 KiB = 8 MiB
  CHECK(pipeline_chunk_bytes(Algo::nvls_tree, Proto::simple, 1 << 30, 16, 16, 2) == 131072);
  CHECK(pipeline_chunk_bytes(Algo::nvls_tree, Proto::simple, 16 << 20, 16, 16, 2) == 65536);
  // 4 MiB is below 8 MiB too: 32 KiB; from 4 nodes 64 KiB at most, even at 1 GiB
  CHECK(pipeline_chunk_bytes(Algo::nvls_tree, Proto::simple, 4 << 20, 16, 16, 2) == 32768);
  CHECK(pipeline_chunk_bytes(Algo::nvls_tree, Proto::simple, 1 << 30, 16, 32, 4) == 65536);
  // the ring keeps its chunk
  CHECK(pipeline_chunk_bytes(Algo::ring, Proto::simple, 1 << 20, 16, 16, 2) == chunk_bytes(Algo::ring, Proto::simple));
}

TEST_CASE("NCCL's p2p order: the quadratic deltas, nodes first, each round's peers matched") {
  // NCCL's own example (src/init.cc): "Example sequence for 16 ranks: 0, 1, 3, 6, 10, 15, 5,
  // 12, 4, 13, 7, 2, 14, 11, 9, 8"; 6: (x^2 + x) / 2 mod 8 = 0 1 3 6 2 7 5 4, those below 6
  CHECK(nccl_p2p_deltas(16) == std::vector<int>{0, 1, 3, 6, 10, 15, 5, 12, 4, 13, 7, 2, 14, 11, 9, 8});
  CHECK(nccl_p2p_deltas(6) == std::vector<int>{0, 1, 3, 2, 5, 4});
  // 4 ranks on one node, by hand: rank 0 sends to 0, 1, 3, 2 and receives from 0, 3, 1, 2
  const auto r0 = nccl_p2p_schedule({}, 4, 0);
  const std::vector<std::pair<int, int>> want{{0, 0}, {1, 3}, {3, 1}, {2, 2}};
  for (size_t i = 0; i < want.size(); ++i) CHECK(std::pair{r0[i].send, r0[i].recv} == want[i]);
  // 2 nodes of 4, and nodes of 4, 4, 2 (flat): every round pairs a sender with its receiver,
  // every rank meets every peer once; with equal nodes the first 4 rounds stay in the node
  for (const std::vector<int>& locality : {std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}, std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2}}) {
    const int p = static_cast<int>(locality.size());
    std::vector<std::vector<P2pRound>> all;
    for (int r = 0; r < p; ++r) all.push_back(nccl_p2p_schedule(locality, p, r));
    for (int r = 0; r < p; ++r) {
      std::vector<int> met(static_cast<size_t>(p), 0);
      for (int i = 0; i < p; ++i) {
        const P2pRound& round = all[static_cast<size_t>(r)][static_cast<size_t>(i)];
        CHECK(all[static_cast<size_t>(round.send)][static_cast<size_t>(i)].recv == r);
        ++met[static_cast<size_t>(round.send)];
        if (p == 8 && i < 4) CHECK(locality[static_cast<size_t>(round.send)] == locality[static_cast<size_t>(r)]);
      }
      CHECK(std::count(met.begin(), met.end(), 1) == p);
    }
  }
}

TEST_CASE("NCCL's alltoall plan: p2p channels, channels per peer, parts, LL or Simple, peers at once") {
  // NCCL's logs: one H100 node "24 coll channels ... 32 p2p channels, 32 p2p channels per
  // peer"; three "16 coll channels ... 16 p2p channels, 2 p2p channels per peer"
  const GpuSystem one = system_of("h100", "ndr", "intel", 1, 8), three = system_of("h100", "ndr", "intel", 3, 8);
  CHECK(communicator_channels(one) == 24);
  CHECK(communicator_channels(three) == 16);
  const P2pPlan big_one = plan_alltoall(one, 24, 64.0 * 1024 * 1024);
  CHECK(big_one.p2p_channels == 32);
  CHECK(big_one.channels_per_peer == 32);
  // nChannelsMin: 32 halved while x 8 ranks exceeds 32; 8 MiB blocks: Simple, 4 parts of 2 MiB
  // (at least 512 KiB / 8, at most 512 KiB x 32), 32 / 4 x 8 peers at once
  CHECK(big_one.channels_min == 4);
  CHECK(big_one.proto == Proto::simple);
  CHECK(big_one.parts == 4);
  CHECK(big_one.peers_at_once == 64);
  const P2pPlan big_three = plan_alltoall(three, 16, 96.0 * 1024 * 1024);
  CHECK(big_three.p2p_channels == 16);
  CHECK(big_three.channels_per_peer == 2);
  // 4 MiB blocks across nodes: one channel at first, doubled once (a part at most 128 KiB,
  // but no more than 2 channels per peer)
  CHECK(big_three.channels_min == 1);
  CHECK(big_three.parts == 2);
  CHECK(big_three.peers_at_once == 64);
  // LL up to 2 x 16 KiB per block across nodes, up to 32 x 16 KiB on one node
  CHECK(plan_alltoall(three, 16, 24 * 32768.0).proto == Proto::ll);
  CHECK(plan_alltoall(three, 16, 24 * 32769.0).proto == Proto::simple);
  CHECK(plan_alltoall(one, 24, 8 * 524288.0).proto == Proto::ll);
  CHECK(plan_alltoall(one, 24, 8 * 524289.0).proto == Proto::simple);
  const P2pPlan small = plan_alltoall(three, 16, 24 * 1024.0);
  CHECK(small.parts == 1);
  CHECK(small.step_bytes == 65536);  // LL's buffer over NCCL_STEPS
}

TEST_CASE("the transport of a point to point: a Ring hop's latency and protocol, no ceiling") {
  const GpuSystem h100 = system_of("h100", "ndr", "intel", 2, 8);
  const Transport ll(h100, {Algo::ring, Proto::ll, 1, 1, true}, std::vector<EndpointKind>(16, EndpointKind::gpu));
  CHECK(ll.collective_overhead() == doctest::Approx(6.6e-6).epsilon(1e-12).scale(0));
  CHECK(ll.hop_latency(Hw::nvlink) == doctest::Approx(0.6e-6).epsilon(1e-12).scale(0));  // no CPU overhead clamp
  CHECK(ll.hop_latency(Hw::net) == doctest::Approx(2.7e-6).epsilon(1e-12).scale(0));
  CHECK(ll.wire_factor(EndpointKind::gpu, EndpointKind::gpu, true) == doctest::Approx(2 * 25 / 20.6).epsilon(1e-12).scale(0));
  CHECK(std::isinf(ll.data_rate_cap()));
  const Transport simple(h100, {Algo::ring, Proto::simple, 2, 2, true}, std::vector<EndpointKind>(16, EndpointKind::gpu));
  CHECK(simple.hop_latency(Hw::nvlink) == doctest::Approx(3.4e-6).epsilon(1e-12).scale(0));
  CHECK(simple.hop_latency(Hw::net) == doctest::Approx(14e-6).epsilon(1e-12).scale(0));
}
