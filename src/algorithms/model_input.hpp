#pragma once
// What the cost model knows of a run (model/cost_model.hpp prices it): the ranks, the
// vector, alpha and B, the groups, and the platform's routes when there is one. Each
// algorithm's schedule (algorithms/schedules.hpp) reads it, so it lives below the model.
#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "algorithms/collective.hpp"
#include "algorithms/server_deployment.hpp"

namespace collsim {

class Network;      // model/network.hpp
class MessageCost;  // comm/message_cost.hpp

// The routes that the messages of one step use at once (the hierarchical allreduce's
// messages inside groups, or between them): their largest latency, and the bottleneck:
// the link whose bandwidth, shared equally by the messages crossing it, is the smallest.
struct SharedRoutes {
  double alpha = 0;
  double bandwidth = 1;  // bytes/s of the bottleneck link
  int sharing = 1;       // messages crossing it at once
  double per_message_bandwidth() const { return bandwidth / sharing; }
};

struct ModelInput {
  int p = 1;                    // ranks
  double alpha = 0;             // latency of one message, seconds (the route's latency)
  double bandwidth = 1;         // B, bytes per second (the route's bottleneck)
  size_t elems = 0;             // elements per rank (the logical ones: what the network carries)
  double bytes_per_elem = 4;    // the element's size in bytes
  size_t segment_elems = 1;     // pipelined algorithms: elements per segment
  // What the lower bound assumes of the ranks' own links (unset: bandwidth and alpha): the
  // mean injection bandwidth (total bytes / the sum of the ranks' link bandwidths bounds
  // the time) and the smallest latency between two ranks.
  double injection_bandwidth = 0;
  double min_alpha = -1;
  int servers = 1;              // parameter-server: S (clamped to p when the ranks serve)
  ServerDeployment deployment;  // parameter-server: server processes, local aggregation, CPU costs
  // hierarchical: the sizes of the locality groups (they add up to p; empty: one group of
  // p ranks), and the costs of a step inside the groups and between them (unset: alpha
  // and bandwidth, unshared).
  std::vector<int> group_sizes;
  std::optional<SharedRoutes> intra, inter;

  // Simulated bytes of a message of `count` elements (as Comm sends them).
  double bytes(size_t count) const;
  double overhead = 0;          // o: what a rank spends before each message leaves (LogP)
  int channels = 1;             // ring and hierarchical: concurrent rings (algorithms/channels.hpp)
  HierarchyLevel intra_level = HierarchyLevel::ring;  // hierarchical: the algorithm inside the groups
  HierarchyLevel inter_level = HierarchyLevel::ring;  // and between them
  int fifo = 1;                 // NCCL's algorithms: chunks a connection's FIFO holds (CollectiveArgs::fifo)
  double hop_inside = 0;        // NCCL's algorithms: a hop's latency inside a group and between (CollectiveArgs)
  double hop_across = 0;
  // Bytes per second a rank reduces (gamma = 1 / this): a rank that reduces m bytes of a
  // step is busy m / reduce_bandwidth before its next step (in lock step the step lasts that
  // much longer for the rank reducing the most). Infinite: free.
  double reduce_bandwidth = std::numeric_limits<double>::infinity();
  int root = 0;                 // rooted collectives

  // The platform's routes (model/route_cache.hpp) and each rank's endpoint in it (empty:
  // rank r is endpoint r); unset: the contention-free star of alpha and B above.
  std::shared_ptr<const Network> network;
  std::vector<int> endpoints;
  // The in-network reducers a schedule may address (comm/switch_ops.hpp): schedule rank
  // p + s is switch s, at endpoint switch_endpoints[s] of the network.
  std::vector<int> switch_endpoints;
  // What a message costs beyond its route (a GPU transport's protocol); unset: nothing.
  std::shared_ptr<const MessageCost> message_cost;
  // hierarchical: each rank's locality id (ranks sharing one form a group); empty: groups
  // of consecutive ranks of group_sizes.
  std::vector<int> locality;
  // One message on its own: the sender's overhead, the route's latency, the bytes.
  double message_time(size_t count) const { return overhead + alpha + bytes(count) / bandwidth; }
};

// The network endpoint of a schedule's rank (or switch, from p on).
inline int model_endpoint(const ModelInput& in, int rank) {
  if (rank >= in.p) return in.switch_endpoints[static_cast<size_t>(rank - in.p)];
  return in.endpoints.empty() ? rank : in.endpoints[static_cast<size_t>(rank)];
}

// The hierarchical allreduce's groups of ranks: by locality, else consecutive blocks of
// group_sizes (one group of p when both are empty).
std::vector<std::vector<int>> model_groups(const ModelInput& in);

// The group sizes of these world ranks (a rebuilt group's members, in group order), each
// world rank's locality id in `locality`.
std::vector<int> group_sizes_of(const std::vector<int>& locality, const std::vector<int>& members);

// The model's input for a group of these world ranks, from the whole run's (`all`, whose
// ranks have the locality ids `locality`): its size, its locality groups, its members as
// the route endpoints (the model prices its own routes) and the root and servers the group
// runs with (root_in_group, servers_in_group); the other fields (alpha, B, ...) stay the
// whole run's.
ModelInput model_for_members(const ModelInput& all, const std::vector<int>& locality, const std::vector<int>& members);

}  // namespace collsim
