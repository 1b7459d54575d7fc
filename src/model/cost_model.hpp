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
#include <vector>

#include "algorithms/collective.hpp"
#include "algorithms/model_input.hpp"
#include "algorithms/registry.hpp"

namespace collsim {



// An algorithm's modelled time: its schedule priced on in's network.
double model_time(const AlgorithmInfo& algorithm, const ModelInput& in);

// Each algorithm's modelled time by name (the same, for the tests and the labs).

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
