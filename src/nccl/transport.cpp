#include "nccl/transport.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace collsim::nccl {

namespace {
constexpr double us = 1e-6;
}

double collective_overhead(const GpuSystem& system, Algo algo, Proto proto) {
  // One rank: NCCL launches no collective kernel and runs no tuner ("if (comm->nRanks == 1)
  // { ncclLaunchOneRank(...); return ncclSuccess; }", taskAppend, src/enqueue.cc, 2.20 and
  // later), only a copy of the input to the output ("for 1 rank, out-of-place is memcpy to
  // self, and in-place is nop", src/device/onerank.cu): no baseLat, no hop. collsim prices no
  // local copy of any algorithm.
  if (system.ranks <= 1) return 0;
  switch (algo) {
    case Algo::ring:
    case Algo::tree: return base_latency_us(algo, proto) * us;
    // NVLS's latency is its NVLink hwLat, paid once per collective ("latency = intraLat")
    case Algo::nvls:
    case Algo::nvls_tree: return (base_latency_us(algo, proto) + hop_latency_us(Hw::nvlink, algo, proto)) * us;
    // CollNetDirect's "(ppn-1)*0.4" per phase: the arity serialisation of its direct steps
    case Algo::collnet_direct: return (base_latency_us(algo, proto) + 2 * (system.ppn - 1) * 0.4) * us;
    case Algo::collnet_chain: return base_latency_us(algo, proto) * us;
  }
  return 0;
}

Transport::Transport(const GpuSystem& system, TransportChoice choice, std::vector<EndpointKind> kinds)
    : system_(system), choice_(choice), kinds_(std::move(kinds)),
      // one rank's send/recv are to itself: a copy in the kernel, which collsim prices no more
      // than a collective's one-rank copy (collective_overhead)
      overhead_(!choice.point_to_point                           ? nccl::collective_overhead(system, choice.algo, choice.proto)
                : system.ranks <= 1 || choice.launch_per_receive ? 0
                                                                 : base_latency_us(Algo::ring, choice.proto) * us) {}

// NCCL's hwLat of a hop: on NVLink (inside a node) and across the network. Multi-node rings
// pay at least the CPU's network overhead per intra-node hop (x3 with Simple); with one GPU
// per node the tree's network latency serves every algorithm (2.25.1). In-network
// reductions pay their NVLink latency once per collective (collective_overhead), and a
// SHARP round trip its network latency once, half each way.
double Transport::hop_latency(Hw hw) const {
  const Algo algo = choice_.algo;
  const Proto proto = choice_.proto;
  if (choice_.point_to_point) return hop_latency_us(hw, Algo::ring, proto) * us;
  if (hw == Hw::net) {
    const double net = system_.ppn == 1 ? hop_latency_us(Hw::net, Algo::tree, proto) : hop_latency_us(Hw::net, algo, proto);
    return (is_collnet(algo) ? net / 2 : algo == Algo::nvls ? 0 : net) * us;
  }
  if (algo == Algo::nvls || algo == Algo::nvls_tree) return 0;
  double intra = hop_latency_us(hw, algo, proto);
  if (algo == Algo::ring && system_.nodes > 1)
    intra = std::max(intra, net_overhead_us(system_.cpu) * (proto == Proto::simple ? 3 : 1));
  return intra * us;
}

// NCCL's model prices its own algorithms' network posts inside their hop latencies (the
// ring's max(intraLat, netOverhead) per step); a send/recv's network message carries its post
// explicitly: getNetOverhead (src/graph/tuning.cc, NCCL 2.25.1, commit 80f6bda4: "Network
// post overhead", x86 Intel 1 us, AMD 2 us, else 1 us), x3 with Simple as the ring's ("if (p
// == NCCL_PROTO_SIMPLE) netOverhead *= 3"). A GPU's posts go one after another: one proxy thread per GPU walks its ops in turn
// (src/proxy.cc, progressOps: "while (op) { ... op->progress(...)", whose sendProxyProgress in
// src/transport/net.cc posts the op's isend).
double Transport::post_overhead() const {
  if (!choice_.point_to_point) return 0;
  return net_overhead_us(system_.cpu) * (choice_.proto == Proto::simple ? 3 : 1) * us;
}

// NCCL's model prices no send/recv: a group's kernel launch is the Ring's baseLat, as for the
// alltoall's one launch (the constructor's overhead_).
double Transport::receive_launch() const {
  return choice_.launch_per_receive && system_.ranks > 1 ? base_latency_us(Algo::ring, choice_.proto) * us : 0;
}

double Transport::post_overhead(int from, int to, double bytes) const {
  (void)bytes;
  const bool gpus = kinds_[static_cast<size_t>(from)] == EndpointKind::gpu && kinds_[static_cast<size_t>(to)] == EndpointKind::gpu;
  if (!gpus || system_.node_of[static_cast<size_t>(from)] == system_.node_of[static_cast<size_t>(to)]) return 0;
  return post_overhead();
}

// Wire bytes per data byte: 1 / (the protocol's efficiency x the path's).
double Transport::wire_factor(EndpointKind a, EndpointKind b, bool same_node) const {
  const GpuArch arch = system_.gpu->arch;
  const double protocol = protocol_efficiency(choice_.algo, choice_.proto, arch, system_.nodes);
  if (a == EndpointKind::nvswitch || b == EndpointKind::nvswitch)
    return 1 / (system_.nvlink_efficiency() * nvls_efficiency(arch));
  // CollNetDirect on compute capability 90 and more: "busBw *= .85" (CollNetChain: no refinement)
  if (a == EndpointKind::sharp_switch || b == EndpointKind::sharp_switch)
    return 1 / (system_.nic->payload_efficiency() *
                (choice_.algo == Algo::collnet_direct && arch != GpuArch::ampere ? .85 : 1.0));
  // (NVLS's efficiency is its switch's: its tree across nodes runs at the NICs' rate)
  const bool in_switch = choice_.algo == Algo::nvls || choice_.algo == Algo::nvls_tree;
  return 1 / ((in_switch ? 1.0 : protocol) * (same_node ? system_.nvlink_efficiency() : system_.nic->payload_efficiency()));
}

// NCCL's ceilings on bus bandwidth, over the channels, shared by the messages a rank keeps in
// flight at once: one per ring; two per tree lane, its up and its down stream, which move at
// once (runTreeSplit, each hop passing a chunk on cut-through: nccl_trees.hpp), so that L lanes
// of n / L, each sent up and down, take 2 n / (L r) = n / algorithm bandwidth = 2 n / bus
// bandwidth at a message rate r of bus bandwidth / 2 L.
double Transport::data_rate_cap() const {
  if (choice_.point_to_point) return std::numeric_limits<double>::infinity();
  const GpuArch arch = system_.gpu->arch;
  const int nodes = system_.nodes, channels = choice_.channels;
  const double gbs = 1e9, at_once = choice_.messages_at_once;
  const double ll = ll_max_bandwidth_gbs(arch, system_.cpu, nodes) * gbs;
  if (choice_.algo == Algo::ring) {
    if (choice_.proto == Proto::ll) return ll / at_once;
    if (choice_.proto == Proto::ll128) return channels * ring_ll128_channel_max_gbs(arch, nodes) * gbs / at_once;
  }
  if (choice_.algo == Algo::tree) {
    double bus = channels * tree_channel_max_gbs(arch, nodes) * gbs;
    if (choice_.proto == Proto::ll) bus = std::min(bus, ll);
    if (choice_.proto == Proto::ll128) bus = std::min(bus, channels * tree_ll128_channel_max_gbs(arch, nodes) * gbs);
    return bus / (2 * at_once);
  }
  return std::numeric_limits<double>::infinity();
}

MessagePrice Transport::compute(int from, int to) const {
  const EndpointKind a = kinds_[static_cast<size_t>(from)], b = kinds_[static_cast<size_t>(to)];
  const bool gpus = a == EndpointKind::gpu && b == EndpointKind::gpu;
  const bool same_node = gpus && system_.node_of[static_cast<size_t>(from)] == system_.node_of[static_cast<size_t>(to)];
  MessagePrice price;
  price.wire_factor = wire_factor(a, b, same_node);
  const bool via_nvlink = same_node || a == EndpointKind::nvswitch || b == EndpointKind::nvswitch;
  price.hop_latency = hop_latency(via_nvlink ? Hw::nvlink : Hw::net);
  if (gpus) price.rate_cap = data_rate_cap() * price.wire_factor;
  // the kernel that uses a GPU's message: launched once it is in (a new group of send/recv)
  if (b == EndpointKind::gpu) price.hop_latency += receive_launch();
  return price;
}

// A price depends only on the endpoints' kinds and on whether two GPUs share a node
// (compute): one entry per such class, not per pair (p^2 of them at p = 131,072).
const MessagePrice& Transport::price(int from, int to) const {
  const EndpointKind a = kinds_[static_cast<size_t>(from)], b = kinds_[static_cast<size_t>(to)];
  const bool same_node = a == EndpointKind::gpu && b == EndpointKind::gpu &&
                         system_.node_of[static_cast<size_t>(from)] == system_.node_of[static_cast<size_t>(to)];
  const uint64_t key = static_cast<uint64_t>(a) * 8 + static_cast<uint64_t>(b) * 2 + (same_node ? 1 : 0);
  auto it = prices_.find(key);
  if (it == prices_.end()) it = prices_.emplace(key, compute(from, to)).first;
  return it->second;
}

}  // namespace collsim::nccl
