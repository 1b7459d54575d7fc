#include "model/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "algorithms/schedules.hpp"
#include "comm/message_cost.hpp"
#include "model/contention.hpp"

namespace collsim {

double model_time(const AlgorithmInfo& algorithm, const ModelInput& in) {
  return estimate_schedule(algorithm.schedule(in), in).time;
}

double model_broadcast_flat(const ModelInput& in) { return estimate_schedule(schedule_broadcast_flat(in), in).time; }
double model_broadcast_binomial(const ModelInput& in) { return estimate_schedule(schedule_broadcast_binomial(in), in).time; }
double model_broadcast_pipeline(const ModelInput& in) { return estimate_schedule(schedule_broadcast_pipeline(in), in).time; }
double model_reduce_flat(const ModelInput& in) { return estimate_schedule(schedule_reduce_flat(in), in).time; }
double model_reduce_binomial(const ModelInput& in) { return estimate_schedule(schedule_reduce_binomial(in), in).time; }
double model_allreduce_naive(const ModelInput& in) { return estimate_schedule(schedule_allreduce_naive(in), in).time; }
double model_allreduce_naive_binomial(const ModelInput& in) { return estimate_schedule(schedule_allreduce_naive_binomial(in), in).time; }
double model_allreduce_ring(const ModelInput& in) { return estimate_schedule(schedule_allreduce_ring(in), in).time; }
double model_allreduce_recursive_doubling(const ModelInput& in) { return estimate_schedule(schedule_allreduce_recursive_doubling(in), in).time; }
double model_allreduce_rabenseifner(const ModelInput& in) { return estimate_schedule(schedule_allreduce_rabenseifner(in), in).time; }
double model_allreduce_binary_tree(const ModelInput& in) { return estimate_schedule(schedule_allreduce_binary_tree(in), in).time; }
double model_allreduce_double_binary_tree(const ModelInput& in) { return estimate_schedule(schedule_allreduce_double_binary_tree(in), in).time; }
double model_allreduce_direct(const ModelInput& in) { return estimate_schedule(schedule_allreduce_direct(in), in).time; }
double model_allreduce_hierarchical(const ModelInput& in) { return estimate_schedule(schedule_allreduce_hierarchical(in), in).time; }
double model_allreduce_parameter_server(const ModelInput& in) { return estimate_schedule(schedule_allreduce_parameter_server(in), in).time; }
double model_broadcast_scatter_allgather(const ModelInput& in) { return estimate_schedule(schedule_broadcast_scatter_allgather(in), in).time; }
double model_reduce_scatter_ring(const ModelInput& in) { return estimate_schedule(schedule_reduce_scatter_ring(in), in).time; }
double model_reduce_scatter_recursive_halving(const ModelInput& in) { return estimate_schedule(schedule_reduce_scatter_recursive_halving(in), in).time; }
double model_allgather_ring(const ModelInput& in) { return estimate_schedule(schedule_allgather_ring(in), in).time; }
double model_allgather_recursive_doubling(const ModelInput& in) { return estimate_schedule(schedule_allgather_recursive_doubling(in), in).time; }

double model_alltoall_pairwise(const ModelInput& in) { return estimate_schedule(schedule_alltoall_pairwise(in), in).time; }

double model_alltoall_direct(const ModelInput& in) { return estimate_schedule(schedule_alltoall_direct(in), in).time; }

namespace {

// The least latency of a message, and what every rank pays before its first: the links'
// alpha, and on GPUs (comm/message_cost.hpp) the transport's smallest hop latency, which the
// links' latency makes way for (platform.hpp, latency_in_transport), and its launch per
// collective, which every rank waits out before it sends.
struct LeastLatency {
  double per_message = 0;
  double per_collective = 0;
};

LeastLatency least_latency(const ModelInput& in) {
  LeastLatency least{in.min_alpha >= 0 ? in.min_alpha : in.alpha, 0};
  const MessageCost* cost = in.message_cost.get();
  if (cost == nullptr) return least;
  // a price depends on the kinds of its ends and on whether they share a node: rank 0's
  // prices to and from every rank meet every class of the ranks' pairs; a transport whose
  // protocol follows the size (NCCL's send/recv) is at its quickest for the smallest message
  double hop = std::numeric_limits<double>::infinity();
  for (int r = 1; r < in.p; ++r)
    hop = std::min({hop, cost->price_for(0, r, 0).hop_latency, cost->price_for(r, 0, 0).hop_latency});
  least.per_message += std::isfinite(hop) ? hop : 0;
  least.per_collective = cost->collective_overhead();
  return least;
}

}  // namespace

// The latency term on GPUs: the transport's launch + ceil(log2 p) of its least hop latency.
LowerBound lower_bound(Collective collective, const ModelInput& in) {
  if (in.p == 1) return {};
  const double n = in.bytes(in.elems);
  const LeastLatency least = least_latency(in);
  const double latency_term = least.per_collective + ceil_log2(in.p) * least.per_message;
  const double b = in.injection_bandwidth > 0 ? in.injection_bandwidth : in.bandwidth;
  switch (collective) {
    case Collective::allreduce: return {2.0 * (in.p - 1) / in.p * n / b, latency_term};
    case Collective::broadcast:
    case Collective::reduce: return {n / b, latency_term};
    case Collective::reduce_scatter:
    case Collective::allgather: return {1.0 * (in.p - 1) / in.p * n / b, latency_term};
    case Collective::alltoall:
      return {(in.p - 1) * in.bytes(alltoall_block(in.elems, in.p, 0).count) / b, latency_term};
  }
  return {};
}

double busbw_factor(Collective collective, int p) {
  switch (collective) {
    case Collective::allreduce: return 2.0 * (p - 1) / p;
    case Collective::reduce_scatter:
    case Collective::allgather:
    case Collective::alltoall: return 1.0 * (p - 1) / p;
    case Collective::broadcast:
    case Collective::reduce: return 1.0;
  }
  return 1.0;
}

}  // namespace collsim
