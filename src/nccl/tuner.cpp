#include "nccl/tuner.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

#include "util/errors.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"

// Sources (https://github.com/NVIDIA/nccl/blob/<commit>/<path>):
// [S] src/graph/search.cc, NCCL 2.21.5, commit ab2b89c4c339bd7f816fbc114a4b05d386b66290
// [K] src/graph/connect.cc and src/init.cc (channel counts), NCCL 2.21.5 / 2.18.3
// [T] src/graph/tuning.cc, NCCL 2.25.1, commit 80f6bda4378b99d99e82b4d76a633791cc45fef0
// [E] src/enqueue.cc (getAlgoInfo) NCCL 2.18.1 and src/include/comm.h NCCL 2.19.3
// [V] src/transport/nvls.cc (NCCL_PARAM(NvlsChannels, "NVLS_NCHANNELS", 16), ncclNvlsInit),
//     NCCL 2.21.5, commit ab2b89c4c339bd7f816fbc114a4b05d386b66290

namespace collsim::nccl {

const Graph& Graphs::of(Algo algo) const {
  switch (algo) {
    case Algo::tree: return tree;
    case Algo::nvls:
    case Algo::nvls_tree: return nvls;
    case Algo::collnet_direct:
    case Algo::collnet_chain: return collnet;
    case Algo::ring: break;
  }
  return ring;
}

namespace {

// [S] speedArrayIntra, speedArrayInter, sm90SpeedArrayIntra, sm90SpeedArrayInter (GB/s per
// channel); the sm90 arrays when the GPUs' compute capability is 90 or more.
const std::vector<double>& speeds(GpuArch arch, bool inter) {
  static const std::vector<double> intra{40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
  static const std::vector<double> across{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                          7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  static const std::vector<double> sm90_intra{60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
  static const std::vector<double> sm90_across{48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                               15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  if (arch == GpuArch::ampere) return inter ? across : intra;
  return inter ? sm90_across : sm90_intra;
}

constexpr int max_ring_channels = 16;  // [K] ringGraph.maxChannels = MAXCHANNELS/2

// NCCL's algorithms in NCCL's order (NCCL_ALGO_TREE 0 ... NCCL_ALGO_NVLS_TREE 5)
constexpr Algo nccl_order[] = {Algo::tree, Algo::ring, Algo::collnet_direct, Algo::collnet_chain, Algo::nvls, Algo::nvls_tree};

// Rings: each channel takes its bandwidth out of every GPU's NVLink (in and out of the
// NVSwitch) and, across nodes, out of one NIC. From the first speed that fits, down to
// half of it ([S] "speed[i+1]/bwInter > .49"), the most channels x speed wins (the faster
// speed on a tie); then ncclTopoDupChannels doubles the channels at half the speed unless
// the speed is below 25, or below 50 with more than 4 channels on compute capability > 80.
Graph search_ring(const GpuSystem& system) {
  const bool inter = system.nodes > 1;
  const double nvlink = system.nccl_nvlink_gbs(), nic = system.nccl_nic_gbs();
  const double max_speed = inter ? std::min(nvlink, nic) : nvlink;
  Graph best{0, 0, 0};
  double first = 0;
  for (double speed : speeds(system.gpu->arch, inter)) {
    if (speed > max_speed) continue;
    if (first == 0) first = speed;
    if (speed < 0.49 * first) break;
    int channels = std::min(max_ring_channels, static_cast<int>(nvlink / speed));
    if (inter) channels = std::min(channels, system.nics_per_node * static_cast<int>(nic / speed));
    if (channels * speed > best.channels * best.bw_intra) best = {channels, speed, speed};
  }
  if (best.channels == 0) return {1, 0.1, 0.1};  // [S] the fallback: one channel at 0.1
  const bool no_dup = best.bw_intra < 25.0 || (system.gpu->arch != GpuArch::ampere && best.bw_intra < 50.0 && best.channels > 4);
  if (!no_dup) {
    const int dup = std::min(2 * best.channels, max_ring_channels);
    const double divide = std::ceil(static_cast<double>(dup) / best.channels);
    best = {dup, best.bw_intra / divide, best.bw_inter / divide};
  }
  return best;
}

// NVLS: one channel per GPU of the node ([S] "NVLS maxChannels = ngpus", single node
// forces it); the speed is the first whose channels fit the NVLink bandwidth, scaled by
// ngpus / (ngpus - 1) for patterns that are no ring, and across nodes the NIC.
Graph search_nvls(const GpuSystem& system) {
  const int gpus = system.max_ppn;
  const double total = system.nccl_nvlink_gbs() * gpus / std::max(1, gpus - 1);
  const bool inter = system.nodes > 1;
  for (double speed : speeds(system.gpu->arch, inter))
    if (speed * gpus <= total && (!inter || speed <= system.nccl_nic_gbs())) return {gpus, speed, speed};
  return {1, 0.1, 0.1};
}

}  // namespace

Graphs search_graphs(const GpuSystem& system) {
  Graphs graphs;
  graphs.ring = search_ring(system);
  graphs.tree = graphs.ring;     // [K] treeGraph.minChannels = maxChannels = ringGraph.nChannels
  graphs.collnet = graphs.ring;  // [T] CollNetDirect and CollNetChain share one graph (collNetGraph)
  graphs.nvls = search_nvls(system);
  return graphs;
}

namespace {

int log2i(int n) { return n <= 1 ? 0 : static_cast<int>(std::floor(std::log2(n))); }

// Why NCCL would not run (algo, proto) here ([T] the enable rules; empty: it would).
std::string disabled_reason(const GpuSystem& system, Algo algo, Proto proto, const Forced& forced) {
  if (forced.algo && *forced.algo != algo) return fmt::format("nccl.algo is {}", algo_name(*forced.algo));
  if (forced.proto && *forced.proto != proto) return fmt::format("nccl.proto is {}", proto_name(*forced.proto));
  if (!forced.runnable.empty() && std::find(forced.runnable.begin(), forced.runnable.end(), algo) == forced.runnable.end())
    return "collsim does not run it";
  if (reduces_in_switch(algo) && proto != Proto::simple) return "runs Simple only";
  if ((algo == Algo::nvls || algo == Algo::nvls_tree) && !system.nvls)
    return "no NVSwitch that reduces (NVLink SHARP: H100 and later, with an nvswitch host per node)";
  if (algo == Algo::nvls && system.nodes > 1 && !system.collnet) return "across nodes without CollNet, NVLSTree runs instead";
  // NCCL's NVLS across nodes also reduces through CollNet's switches (all_reduce.h, runNvls with
  // nNodes > 1), which collsim's NVLS does not: it would leave each node's sum
  if (algo == Algo::nvls && system.nodes > 1)
    return "across nodes it reduces through CollNet's switches too, which collsim does not run";
  if (algo == Algo::nvls_tree && system.nodes == 1) return "one node (NVLS runs instead)";
  if (algo == Algo::nvls_tree && system.ppn != system.max_ppn) return "nodes of unequal size";
  if (is_collnet(algo) && !system.collnet) return "no switches with SHARP (a NIC named *-sharp)";
  // collsim's switch actor reduces each GPU i's slice over the nodes: the nodes' slices must match
  if (is_collnet(algo) && system.ppn != system.max_ppn) return "nodes of unequal size";
  for (const auto& [aside, why] : forced.set_aside)
    if (aside == algo) return why;
  return {};
}

// [T] ncclTopoTuneModel's bus bandwidth of (algo, proto), GB/s, for `channels` channels.
double bus_bandwidth(const GpuSystem& system, const Graph& graph, Algo algo, Proto proto, int channels) {
  const int nodes = system.nodes;
  const GpuArch arch = system.gpu->arch;
  double bw = nodes <= 2 || is_collnet(algo) ? graph.bw_intra : graph.bw_inter;
  if (algo == Algo::nvls) bw = std::min(graph.bw_intra, graph.bw_inter);
  if (algo == Algo::nvls_tree) bw = std::min(graph.bw_intra, nodes <= 2 ? graph.bw_inter : graph.bw_inter / 2);
  double bus = channels * bw;
  const double ll_max = ll_max_bandwidth_gbs(arch, system.cpu, nodes);
  if (algo == Algo::ring && proto == Proto::ll) bus = std::min(ll_max, bus * .5);
  if (algo == Algo::ring && proto == Proto::ll128) bus = std::min(bus * 0.92, channels * ring_ll128_channel_max_gbs(arch, nodes));
  if (algo == Algo::tree) bus = std::min(bus * .92, channels * tree_channel_max_gbs(arch, nodes));
  if (algo == Algo::tree && proto == Proto::ll) bus = std::min(bus / 3.8, ll_max);
  if (algo == Algo::tree && proto == Proto::ll128)
    bus = std::min(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), channels * tree_ll128_channel_max_gbs(arch, nodes));
  if (algo == Algo::collnet_direct) {
    // "Collnet+Direct requires all GPUs to have a local NIC to work at full speed": "factor =
    // ppn/nCh; factor -= (factor-1)/2; busBw /= factor", x.85 from compute capability 90
    double factor = static_cast<double>(system.ppn) / channels;
    factor -= (factor - 1) / 2;
    bus /= factor;
    if (arch != GpuArch::ampere) bus *= .85;
  }
  return bus;
}

// [T] ncclTopoTuneModel's latency of (algo, proto), us.
double latency(const GpuSystem& system, Algo algo, Proto proto) {
  const int ranks = system.ranks, nodes = system.nodes, ppn = system.ppn;
  const double intra = hop_latency_us(Hw::nvlink, algo, proto);
  const double inter = ppn == 1 ? hop_latency_us(Hw::net, Algo::tree, proto) : hop_latency_us(Hw::net, algo, proto);
  double lat = base_latency_us(algo, proto);
  switch (algo) {
    case Algo::ring: {
      const int steps = 2 * (ranks - 1), inter_steps = nodes == 1 ? 0 : 2 * (nodes - 1);
      const double overhead = nodes > 1 ? net_overhead_us(system.cpu) * (proto == Proto::simple ? 3 : 1) : 0;
      return lat + (steps - inter_steps) * std::max(intra, overhead) + inter_steps * inter;
    }
    case Algo::tree: return lat + 2 * ((ranks / nodes - 1) * intra + log2i(nodes) * inter);
    // "Add 0.4 us arity serialization latency"
    case Algo::collnet_direct: return lat + 2 * (std::min(1, ppn - 1) * intra + (ppn - 1) * 0.4) + inter;
    case Algo::collnet_chain: return lat + 2 * (ppn - 1) * intra + inter;
    case Algo::nvls: return intra + (nodes > 1 ? inter : 0);
    case Algo::nvls_tree: return lat + intra + 2 * log2i(nodes) * inter;
  }
  return lat;
}

// [T] the channels NCCL's communicator runs: two per channel of the search (ncclTopoPostset
// doubles them), at most MAXCHANNELS (32).
int compute_channels(const Graph& graph) { return std::min(32, 2 * graph.channels); }

Candidate price(const GpuSystem& system, const Graphs& graphs, Algo algo, Proto proto, double bytes,
                const Forced& forced) {
  Candidate c{algo, proto, disabled_reason(system, algo, proto, forced)};
  const Graph& graph = graphs.of(algo);
  const int channels = forced.channels ? *forced.channels : graph.channels;
  const double bus = bus_bandwidth(system, graph, algo, proto, channels);
  // "Convert bus BW to algorithm BW": ring nRanks / nsteps, NVLS 5/6, the others .5
  const double ratio = algo == Algo::ring ? system.ranks / (2.0 * (system.ranks - 1))
                       : algo == Algo::nvls || algo == Algo::nvls_tree ? 5.0 / 6.0 : .5;
  c.bandwidth_gbs = bus * ratio;
  c.latency_us = latency(system, algo, proto);
  // [T] ncclTopoGetAlgoTime: the tree correction; the ring's plateau ("lat *= 1.4" from
  // compute capability 80, 1.9 before) for Simple across nodes once each channel's share of
  // a rank's chunk reaches 64 bytes
  if (algo == Algo::tree) c.bandwidth_gbs *= tree_correction(proto, bytes);
  const int compute = forced.channels ? *forced.channels : compute_channels(graph);
  if (algo == Algo::ring && proto == Proto::simple && system.nodes > 1 && bytes / (compute * system.ranks) >= 64)
    c.latency_us *= 1.4;
  if (c.bandwidth_gbs <= 0 && c.disabled.empty()) c.disabled = "no bandwidth in NCCL's model";
  c.time_us = c.latency_us + bytes / (1000 * c.bandwidth_gbs);
  return c;
}

// [E] getAlgoInfo: fewer channels (then threads) while the bytes are less than channels x
// threads x threshold; NVLS keeps its own channels. Thread counts and thresholds: Simple
// 512 threads (NCCL_SIMPLE_MAX_NTHREADS), threshold 64; LL 512, threshold 8 (x nRanks on the
// ring); LL128 640, threshold 8; NVLS and CollNet 640 (NCCL_MAX_NTHREADS), CollNet's threshold 512.
// [V] NVLS and NVLSTree run comm->nvlsChannels ("NVLS should not need more than 16 channels to
// get peak BW"): NCCL_NVLS_NCHANNELS, 16 by default, between NCCL_MIN_CTAS (1) and
// NCCL_MAX_CTAS (32), whatever the NVLS graph's channels (its heads).
constexpr int nvls_channels = 16;

int channels_for(const GpuSystem& system, const Graph& graph, const Candidate& c, double bytes, const Forced& forced) {
  if (forced.channels) return *forced.channels;
  int channels = compute_channels(graph);
  if (c.algo == Algo::nvls || c.algo == Algo::nvls_tree) return nvls_channels;
  int threads = c.proto == Proto::ll128 || is_collnet(c.algo) ? 640 : 512;
  double threshold = c.proto == Proto::simple ? (is_collnet(c.algo) ? 512 : 64) : 8;
  if (c.algo == Algo::ring && c.proto == Proto::ll) threshold *= system.ranks;
  while (bytes < static_cast<double>(channels) * threads * threshold) {
    if (channels >= 2) --channels;
    else if (threads % 128 == 0) threads /= 2;
    else break;
  }
  return channels;
}

}  // namespace

std::vector<Candidate> price_allreduce(const GpuSystem& system, double bytes, const Forced& forced) {
  const Graphs graphs = search_graphs(system);
  std::vector<Candidate> candidates;
  for (Algo algo : nccl_order)
    for (Proto proto : {Proto::ll, Proto::ll128, Proto::simple})
      candidates.push_back(price(system, graphs, algo, proto, bytes, forced));
  return candidates;
}

namespace {

std::string name_of(const Candidate& c) { return fmt::format("{}/{}", algo_name(c.algo), proto_name(c.proto)); }

// What won and why, in NCCL's names: its predicted time (latency + bytes at its bandwidth),
// the runner-up, and what NCCL would not run here.
std::string explain(const std::vector<Candidate>& candidates, const Candidate& best, int channels, double bytes) {
  std::string why = fmt::format("NCCL's tuner chose {} on {} channel{}: predicted {} ({} latency + {} at {} GB/s)",
                                name_of(best), channels, channels == 1 ? "" : "s", format_time(best.time_us * 1e-6),
                                format_time(best.latency_us * 1e-6), format_size(bytes), fmt::format("{:.4g}", best.bandwidth_gbs));
  const Candidate* second = nullptr;
  for (const Candidate& c : candidates)
    if (c.disabled.empty() && &c != &best && (second == nullptr || c.time_us < second->time_us)) second = &c;
  if (second != nullptr)
    why += fmt::format(", {:.3g}x faster than {} ({})", second->time_us / best.time_us, name_of(*second),
                       format_time(second->time_us * 1e-6));
  std::vector<std::string> off;
  for (Algo algo : nccl_order) {
    // an algorithm is off when all its protocols are; say why its Simple is (the last, and the
    // protocol every algorithm runs)
    const auto first = std::find_if(candidates.rbegin(), candidates.rend(), [&](const Candidate& c) { return c.algo == algo; });
    const bool all_off = std::all_of(candidates.begin(), candidates.end(),
                                     [&](const Candidate& c) { return c.algo != algo || !c.disabled.empty(); });
    if (all_off && first != candidates.rend() && first->disabled.rfind("nccl.", 0) != 0)
      off.push_back(fmt::format("{} ({})", algo_name(algo), first->disabled));
  }
  if (!off.empty()) why += "; not here: " + join(off, ", ");
  return why;
}

}  // namespace

Choice choose_allreduce(const GpuSystem& system, double bytes, const Forced& forced, const std::string& field) {
  if (system.ranks == 1) {
    // one rank: NCCL runs no tuner and launches only a copy of the input to the output
    // (ncclLaunchOneRank, transport.cpp's collective_overhead)
    const Candidate alone{forced.algo.value_or(Algo::ring), forced.proto.value_or(Proto::simple), ""};
    return {alone, 1, search_graphs(system).of(alone.algo),
            "one rank: NCCL runs no collective (ncclLaunchOneRank copies the input to the output): no base latency, no message"};
  }
  const std::vector<Candidate> candidates = price_allreduce(system, bytes, forced);
  const Candidate* best = nullptr;
  for (const Candidate& c : candidates)
    if (c.disabled.empty() && (best == nullptr || c.time_us < best->time_us)) best = &c;
  if (best == nullptr) {
    // what was forced cannot run: say why for the forced algorithm (or the first of them)
    // (the forced protocol, else Simple, which every algorithm runs)
    const Proto proto = forced.proto.value_or(Proto::simple);
    const auto forced_one = std::find_if(candidates.begin(), candidates.end(), [&](const Candidate& c) {
      return (!forced.algo || c.algo == *forced.algo) && c.proto == proto;
    });
    const std::string what = forced_one == candidates.end() ? "nothing" : name_of(*forced_one);
    throw InputError(fmt::format("{}: NCCL cannot run {} here: {}", field, what,
                                 forced_one == candidates.end() ? "" : forced_one->disabled));
  }
  const Graphs graphs = search_graphs(system);
  Choice choice{*best, channels_for(system, graphs.of(best->algo), *best, bytes, forced), graphs.of(best->algo), ""};
  choice.why = explain(candidates, *best, choice.channels, bytes);
  return choice;
}

}  // namespace collsim::nccl
