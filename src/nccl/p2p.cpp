#include "nccl/p2p.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <fmt/format.h>

#include "nccl/tuner.hpp"
#include "util/units.hpp"

// Sources (https://github.com/NVIDIA/nccl/blob/<commit>/<path>):
// [Q] src/enqueue.cc (scheduleP2pTasksToPlan, addP2pToPlan, NCCL_P2P_LL_THRESHOLD) and
//     src/graph/paths.cc (ncclTopoComputeP2pChannels, ncclTopoGetNchannels), commit
//     01e6dd915fdd2627a7205f5aa1c7f14d46990226 (after 2.25.1: the stored version);
// [R] NCCL's releases: v2.29.2-1 "Improves the default number of channels per net peer for
//     all-to-all, send, and recv": before it (2.25.1), NCCL_NCHANNELS_PER_NET_PEER's default,
//     2, gave every network peer 2 channels (paths.cc, NCCL_PARAM(NChannelsPerNetPeer, ..., 2));
// [I] src/init.cc, NCCL 2.18.3, commit ea38312273e5b9a19a224c9ff4c10b7fcf441eaf:
//     P2P_NET_CHUNKSIZE 128 KiB, P2P_NVL_CHUNKSIZE 512 KiB, P2P_PCI_CHUNKSIZE 128 KiB.

namespace collsim::nccl {

namespace {

constexpr int max_channels = 32;               // MAXCHANNELS
constexpr int p2p_per_batch = 8;               // NCCL_MAX_DEV_WORK_P2P_PER_BATCH
constexpr double ll_threshold = 16384;         // [Q] NCCL_P2P_LL_THRESHOLD
constexpr double net_chunk = 128.0 * 1024;     // [I] P2P_NET_CHUNKSIZE
constexpr double nvl_chunk = 512.0 * 1024;     // [I] P2P_NVL_CHUNKSIZE
constexpr int channels_per_net_peer = 2;       // [R] NCCL_NCHANNELS_PER_NET_PEER in 2.25.1

int pow2_up(int n) { return static_cast<int>(std::bit_ceil(static_cast<unsigned>(std::max(1, n)))); }

// [Q] ncclTopoGetNchannels: a peer on NVLink gets 2 x its NVLink links (the path's bandwidth
// over one link's), a peer across the network NCCL_NCHANNELS_PER_NET_PEER; then
// ncclTopoComputeP2pChannels takes the fewest over all peers, a power of two, at most the
// p2p channels.
int channels_per_peer(const GpuSystem& system, int p2p_channels) {
  int fewest = p2p_channels;
  if (system.max_ppn > 1) fewest = std::min(fewest, 2 * std::max(1, system.gpu->nvlink_links));
  if (system.nodes > 1) fewest = std::min(fewest, channels_per_net_peer);
  return std::min(pow2_up(fewest), p2p_channels);
}

// [Q] addP2pToPlan: a block of `bytes` on nChannelsMin channels, at least minPartSize each,
// doubled while a part exceeds maxPartSize (up to nChannelsMax).
int parts_of(double bytes, const P2pPlan& plan, int nodes) {
  if (bytes <= 0) return 1;
  const double min_part = nodes > 1 ? plan.step_bytes / 2 : plan.step_bytes / 8;
  const double max_part = nodes > 1 ? plan.step_bytes : plan.step_bytes * 32;
  int parts = std::min(plan.channels_min, static_cast<int>(std::ceil(bytes / min_part)));
  double part = std::max(min_part, std::ceil(bytes / parts));
  while (part > max_part && parts <= plan.channels_per_peer / 2) {
    parts *= 2;
    part = std::ceil(bytes / parts);
  }
  return parts;
}

}  // namespace

int communicator_channels(const GpuSystem& system) {
  const Graphs graphs = search_graphs(system);
  return std::min(max_channels, 2 * std::min(graphs.ring.channels, graphs.tree.channels));
}

P2pPlan plan_alltoall(const GpuSystem& system, int channels, double bytes) {
  P2pPlan plan;
  const int ranks = system.ranks;
  // [Q] ncclTopoComputeP2pChannels: the communicator's channels, a power of two
  plan.p2p_channels = pow2_up(std::min(channels, max_channels));
  plan.channels_per_peer = channels_per_peer(system, plan.p2p_channels);
  // [Q] scheduleP2pTasksToPlan: "Try to use all channels, but one channel per operation"
  plan.channels_min = plan.channels_per_peer;
  while (plan.channels_min * ranks > plan.p2p_channels && plan.channels_min > 1) plan.channels_min /= 2;
  const double block = std::floor(bytes / ranks);
  // [Q] addP2pToPlan: LL up to nChannelsMax x P2P_LL_THRESHOLD; a step is the LL buffer's
  // (NCCL_STEPS of them), or comm->p2pChunkSize with Simple: [I] the network's chunk across
  // nodes, NVLink's inside one
  plan.proto = block <= plan.channels_per_peer * ll_threshold ? Proto::ll : Proto::simple;
  plan.step_bytes = plan.proto == Proto::ll ? ll_buffer / steps : system.nodes > 1 ? net_chunk : nvl_chunk;
  plan.parts = parts_of(block, plan, system.nodes);
  // [Q] "Each channel runs up to NCCL_MAX_DEV_WORK_P2P_PER_BATCH tasks concurrently"
  plan.peers_at_once = std::max(1, plan.p2p_channels / plan.parts) * p2p_per_batch;
  plan.why = fmt::format(
      "NCCL runs alltoall point to point (a ncclSend and a ncclRecv per peer, no tuner): {} p2p channels, {} per "
      "peer; each block of {} on {} channel{} with {} (LL up to {} x 16 KiB), up to {} peers in flight at once, in "
      "NCCL's p2p order",
      plan.p2p_channels, plan.channels_per_peer, format_size(block), plan.parts, plan.parts == 1 ? "" : "s",
      proto_name(plan.proto), plan.channels_per_peer, plan.peers_at_once);
  return plan;
}

}  // namespace collsim::nccl
