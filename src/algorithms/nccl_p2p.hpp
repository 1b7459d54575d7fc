#pragma once
// NCCL's point-to-point schedule (ncclGroup of ncclSend/ncclRecv, as its alltoall runs):
// the order in which a rank meets its peers, one send peer and one receive peer per round.
// NCCL builds it once per communicator (src/init.cc, the "p2p schedule" block, NVIDIA/nccl
// commit 01e6dd91) and its planner walks it round by round (scheduleP2pTasksToPlan,
// src/enqueue.cc, same commit): nodes first, by node delta, then local ranks, by local
// delta, each delta taken from the quadratic sequence (x^2 + x) / 2 mod N, N the next power
// of two, skipping the deltas >= the count ("Example sequence for 16 ranks: 0, 1, 3, 6, 10,
// 15, 5, 12, 4, 13, 7, 2, 14, 11, 9, 8"). When the nodes hold different numbers of ranks
// the schedule is flat over all ranks.
#include <vector>

namespace collsim {

struct P2pRound {
  int send = 0;  // the rank this rank sends to in the round
  int recv = 0;  // the rank it receives from
};

// Rank `rank`'s p rounds (round 0 is itself); `locality[r]` is rank r's node (ranks sharing
// one form a node, locality_groups), empty: one node.
std::vector<P2pRound> nccl_p2p_schedule(const std::vector<int>& locality, int p, int rank);

// The deltas 0 .. n-1 in NCCL's quadratic order.
std::vector<int> nccl_p2p_deltas(int n);

}  // namespace collsim
