#pragma once
// What one collective of an algorithm costs the simulator, from the scenario's numbers
// alone (no platform is built): the messages it sends and the elements its ranks hold at
// once. The run limits (plan/run_limits.hpp) refuse a run from these before it starts; each
// count is the one the algorithm's code sends (tests/sim/message_count_test.cpp counts the
// messages of real runs of every algorithm).
#include <cstddef>

#include "algorithms/registry.hpp"

namespace collsim {

struct CollectiveShape {
  int p = 1;                 // ranks
  size_t elems = 0;          // elements per rank: logical for messages, carried for scratch
  size_t segment_elems = 1;  // logical elements per segment (pipelined algorithms)
  int channels = 1;          // rings at once (ring and hierarchical allreduce)
  int servers = 1;           // parameter server's S (clamped to p when the ranks serve, as the algorithm does);
                             // with whole variables, those holding one of this vector's (plan/run_limits.cpp)
  int group_size = 0;        // hierarchical: blocks of this many ranks; 0: groups unknown
  bool server_processes = false;  // the servers are processes of their own (placement shared or dedicated)
  bool nvls_inside = false;       // hierarchical: collective.intra nvls (each node's NVSwitch reduces)
};

// Messages of one collective. Exact, but for the hierarchical allreduce without a
// group_size (its groups come from the platform): then the ring's 2 p (p-1) per channel,
// which no grouping exceeds (with collective.intra nvls 2 p (p + 1): 4 messages per rank with
// its NVSwitch, and 2 (G - 1) between the G <= p groups); and for NCCL's pipelined algorithms (tree, NVLS, NVLSTree),
// whose chunks NCCL's tuner sizes: then at most max_pipelined_messages, or what one chunk
// per lane sends when that is more (those to and from a switch included, as the run's log
// counts them). Parameter server processes push and pull
// 2 S p messages (the run's log counts them); local aggregation is not counted here (it
// needs the platform's nodes: one push per node instead of p, and 2 (p - nodes) inside).
constexpr double max_pipelined_messages = 250000;
double collective_messages(const AlgorithmInfo& algorithm, const CollectiveShape& shape);

// Messages the collective has in flight at once over all ranks, for the algorithms that
// post one to every peer at once (allreduce and alltoall direct, NCCL's alltoall: p (p - 1),
// times NCCL's p2p parts), NCCL's tree (every receive of every chunk posted at once: all its
// messages) and parameter server processes (every worker pushes to its S servers at once:
// S p); 0 for the others, whose steps hold O(p) messages at a time. Each is
// a SimGrid transfer in memory until it ends (plan/run_limits.hpp).
double collective_messages_at_once(const AlgorithmInfo& algorithm, const CollectiveShape& shape);

// Elements held at once over all ranks beyond each rank's own vector: the receive buffers
// of the algorithms that take whole vectors from many ranks at once (direct: p-1 vectors
// on every rank; flat reduce and naive: p-1 at the root), one vector's worth otherwise
// (scratch for the incoming chunk, a copy for alltoall).
double collective_scratch_elements(const AlgorithmInfo& algorithm, const CollectiveShape& shape);
// Whole vectors the run holds per rank besides the ranks' own, on average
// (collective_scratch_elements of one element, over p): 1 for most, p - 1 for the direct
// allreduce. For plan_payload's budget.
double vectors_held_per_rank(const AlgorithmInfo& algorithm, int p);

}  // namespace collsim
