#pragma once
// The cost model: each algorithm's schedule (algorithms/schedules.hpp: steps of messages)
// priced on a network (model/contention.hpp: every message on its route, links shared by
// max-min fairness as SimGrid shares them, steps added up along their dependencies).
// Without a platform (ModelInput::network unset) the network is the contention-free star
// where every message costs alpha + bytes/B on full-duplex links of its own, and the result
// is the closed-form alpha-beta formula of each algorithm (reductions are free, gamma = 0):
// with `--network ideal` SimGrid reproduces them exactly whenever the element count divides
// evenly (otherwise they pace each step by its largest message: an upper bound). The
// hierarchical allreduce has two costs on that star, inside its groups and between them,
// where messages may share links (SharedRoutes). docs/algorithms.md derives each formula.
#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "algorithms/collective.hpp"

namespace collsim {

class Network;  // model/network.hpp

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
  size_t elems = 0;             // carried elements per rank
  double bytes_per_elem = 4;    // logical bytes each carried element stands for
  size_t segment_elems = 1;     // pipelined algorithms
  // What the lower bound assumes of the ranks' own links (unset: bandwidth and alpha): the
  // mean injection bandwidth (total bytes / the sum of the ranks' link bandwidths bounds
  // the time) and the smallest latency between two ranks.
  double injection_bandwidth = 0;
  double min_alpha = -1;
  int servers = 1;              // parameter-server: S (clamped to p)
  // hierarchical: the sizes of the locality groups (they add up to p; empty: one group of
  // p ranks), and the costs of a step inside the groups and between them (unset: alpha
  // and bandwidth, unshared).
  std::vector<int> group_sizes;
  std::optional<SharedRoutes> intra, inter;

  // Simulated bytes of a message of `count` elements, rounded as Comm rounds them.
  double bytes(size_t count) const;
  double overhead = 0;          // o: what a rank spends before each message leaves (LogP)
  int channels = 1;             // ring and hierarchical: concurrent rings (algorithms/channels.hpp)
  // Bytes per second a rank reduces (gamma = 1 / this): a rank that reduces m bytes of a
  // step is busy m / reduce_bandwidth before its next step (in lock step the step lasts that
  // much longer for the rank reducing the most). Infinite: free.
  double reduce_bandwidth = std::numeric_limits<double>::infinity();
  int root = 0;                 // rooted collectives

  // The platform's routes (model/route_cache.hpp) and each rank's endpoint in it (empty:
  // rank r is endpoint r); unset: the contention-free star of alpha and B above.
  std::shared_ptr<const Network> network;
  std::vector<int> endpoints;
  // hierarchical: each rank's locality id (ranks sharing one form a group); empty: groups
  // of consecutive ranks of group_sizes.
  std::vector<int> locality;
  // One message on its own: the sender's overhead, the route's latency, the bytes.
  double message_time(size_t count) const { return overhead + alpha + bytes(count) / bandwidth; }
};

using ModelFn = double (*)(const ModelInput& in);

// The hierarchical allreduce's groups of ranks: by locality, else consecutive blocks of
// group_sizes (one group of p when both are empty).
std::vector<std::vector<int>> model_groups(const ModelInput& in);

// Each algorithm's modelled time: its schedule priced on in's network.

double model_broadcast_flat(const ModelInput& in);
double model_broadcast_binomial(const ModelInput& in);
double model_broadcast_pipeline(const ModelInput& in);
double model_reduce_flat(const ModelInput& in);
double model_reduce_binomial(const ModelInput& in);
double model_allreduce_naive(const ModelInput& in);
double model_allreduce_naive_binomial(const ModelInput& in);
double model_allreduce_ring(const ModelInput& in);
double model_allreduce_recursive_doubling(const ModelInput& in);
double model_allreduce_rabenseifner(const ModelInput& in);
double model_allreduce_binary_tree(const ModelInput& in);
double model_allreduce_double_binary_tree(const ModelInput& in);
double model_allreduce_direct(const ModelInput& in);
double model_allreduce_hierarchical(const ModelInput& in);
double model_allreduce_parameter_server(const ModelInput& in);
double model_broadcast_scatter_allgather(const ModelInput& in);
double model_reduce_scatter_ring(const ModelInput& in);
double model_reduce_scatter_recursive_halving(const ModelInput& in);
double model_allgather_ring(const ModelInput& in);
double model_allgather_recursive_doubling(const ModelInput& in);
double model_alltoall_pairwise(const ModelInput& in);
double model_alltoall_direct(const ModelInput& in);

// No algorithm can beat these (allreduce: max(2(p-1)/p n/B, ceil(log2 p) alpha);
// broadcast and reduce: max(n/B, ceil(log2 p) alpha); reduce-scatter and allgather:
// max((p-1)/p n/B, ceil(log2 p) alpha); alltoall: each rank sends (p-1)/p n, the same).
struct LowerBound {
  double bandwidth_term = 0;
  double latency_term = 0;
  double value() const { return bandwidth_term > latency_term ? bandwidth_term : latency_term; }
};
LowerBound lower_bound(Collective collective, const ModelInput& in);

// nccl-tests' definitions: algbw = n / t; busbw = algbw * factor, where the factor is
// 2(p-1)/p for allreduce, (p-1)/p for reduce-scatter and allgather (n being the whole
// vector, p chunks) and alltoall (n a rank's whole send buffer), and 1 for broadcast and
// reduce.
double busbw_factor(Collective collective, int p);

}  // namespace collsim
