#include "model/cost_model.hpp"

#include <stdexcept>

#include "algorithms/schedules.hpp"
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

LowerBound lower_bound(Collective collective, const ModelInput& in) {
  if (in.p == 1) return {};
  const double n = in.bytes(in.elems);
  const double latency_term = ceil_log2(in.p) * (in.min_alpha >= 0 ? in.min_alpha : in.alpha);
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
