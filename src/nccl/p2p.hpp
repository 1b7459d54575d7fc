#pragma once
// How NCCL runs an alltoall: point to point (one ncclSend and one ncclRecv per peer in a
// ncclGroup, as nccl-tests' alltoall_perf calls it), without its tuner. What it decides for a
// size: its p2p channels, how many of them one peer's block is cut into, which protocol the
// block travels with (LL up to NCCL_P2P_LL_THRESHOLD, Simple above), and how many peers its
// plan keeps in flight at once. docs/nccl.md#nccl-alltoall gives the rules and their sources.
#include <string>

#include "nccl/constants.hpp"
#include "nccl/system.hpp"

namespace collsim::nccl {

struct P2pPlan {
  int p2p_channels = 1;        // comm->p2pnChannels
  int channels_per_peer = 1;   // comm->p2pnChannelsPerPeer (nChannelsMax of an op)
  int channels_min = 1;        // the planner's nChannelsMin
  int parts = 1;               // channels one peer's block runs on (addP2pToPlan's nChannels)
  int peers_at_once = 1;       // maxConcurrent: p2p_channels / parts x NCCL_MAX_DEV_WORK_P2P_PER_BATCH
  Proto proto = Proto::simple;  // LL when the block is at most channels_per_peer x P2P_LL_THRESHOLD
  double step_bytes = 0;       // a step of the protocol's buffer (Simple: comm->p2pChunkSize)
  std::string why;             // for people: the plan in NCCL's names
};

// NCCL's plan for an alltoall of `bytes` per rank (each peer's block bytes / ranks) on this
// system, whose communicator runs `channels` channels (comm->nChannels).
P2pPlan plan_alltoall(const GpuSystem& system, int channels, double bytes);

// The channels NCCL's communicator runs on this system (comm->nChannels: two per channel of
// the ring and tree search, at most MAXCHANNELS).
int communicator_channels(const GpuSystem& system);

}  // namespace collsim::nccl
