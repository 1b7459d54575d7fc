#pragma once
// Asynchronous and bounded-staleness parameter servers: who pushes, and where each server's
// shards lie. Shared by the simulation (sim/async_servers.cpp) and the replay that verifies
// it (run/async_verify.cpp), so that both cut the vector alike.
#include <utility>
#include <vector>

#include "algorithms/chunks.hpp"
#include "comm/buffer.hpp"

namespace collsim {

struct RunPlan;

// What the servers version apart: a gradient bucket (training.bucket or fusion), or the whole
// vector without buckets. Its logical elements are split evenly over the S servers, as the
// synchronous algorithm splits each bucket's allreduce: shard s on server s.
struct AsyncBucket {
  size_t offset = 0;          // its first carried element in the vector
  CarriedMap map;             // its logical elements among its carried ones
  std::vector<Chunk> shards;  // by server: logical elements of the bucket
  // The carried elements [first, end) of server s's shard, in the vector.
  std::pair<size_t, size_t> carried(int server) const;
};

struct AsyncLayout {
  std::vector<AsyncBucket> buckets;  // in the order a worker pushes them (backward order)
  bool bucketed = false;             // training buckets: each update names its bucket
  // Who pushes: every worker alone, or with local aggregation each node's first rank, which
  // first adds up its node's gradients (MXNet's dist_async kvstore: devices of a machine
  // aggregated, machines asynchronous). nodes[i]: pusher i's node, the pusher first.
  std::vector<std::vector<int>> nodes;
  std::vector<int> node_of;  // by world rank: its index in nodes
  int servers = 0;

  int pusher_of(int world) const { return nodes[static_cast<size_t>(node_of[static_cast<size_t>(world)])].front(); }
};

AsyncLayout async_layout(const RunPlan& plan);

}  // namespace collsim
