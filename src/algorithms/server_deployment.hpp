#pragma once
// How the servers of allreduce `parameter-server` are deployed and what their CPU costs
// (collective.parameter_server, docs/scenario-format.md#parameter_server): what the
// algorithm (CollectiveArgs) and its schedule (ModelInput) both read.
#include <cstddef>
#include <memory>
#include <vector>

#include "algorithms/chunks.hpp"

namespace collsim {

// One variable of a gradient bucket held whole by one server
// (collective.parameter_server.variables): its logical elements [offset, offset + count)
// of the bucket, on server `server` (0 .. S-1).
struct ServerPiece {
  size_t offset = 0, count = 0;
  int server = 0;
};
using ServerPieces = std::vector<ServerPiece>;

struct ServerDeployment {
  // The servers are processes of their own, peers comm.size() + s of the ranks (on hosts of
  // their own or beside the workers); false: ranks 0 .. S-1 serve (and compute).
  bool processes = false;
  // Each node's ranks first reduce into the node's first rank, which alone pushes and pulls.
  bool local_aggregation = false;
  double cpu_per_byte = 0;     // seconds a server spends per byte it receives in the push
  double cpu_per_message = 0;  // seconds a server spends per message it receives or sends
  // Training with asynchronous or bounded-staleness servers (sim/async_servers.hpp): each
  // push is applied as it arrives, and a pull is answered once every worker is at most
  // `staleness` iterations behind (-1: at once, asynchronous). False: one allreduce per iteration.
  bool asynchronous = false;
  int staleness = -1;
  // The bucket's variables, each whole on one server, in vector order (set per bucket by
  // the run); null: the vector split evenly, shard s on server s.
  std::shared_ptr<const ServerPieces> pieces;
};

// What a server's CPU spends on `messages` messages of `bytes` each (bytes 0: sent replies);
// the synchronous algorithm and the asynchronous servers both charge it, so that staleness
// 0 gives the synchronous times to the last digit.
inline double server_cpu(const ServerDeployment& deployment, size_t messages, double bytes) {
  return static_cast<double>(messages) * (deployment.cpu_per_message + bytes * deployment.cpu_per_byte);
}

// What each of `servers` servers holds of a vector of `elems` elements, as spans in vector
// order: its even shard (split_evenly), or the pieces placed on it (a server may hold none).
std::vector<std::vector<Chunk>> server_spans(const ServerDeployment& deployment, size_t elems, int servers);

}  // namespace collsim
