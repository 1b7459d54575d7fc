#include "algorithms/registry.hpp"

#include <fmt/format.h>

#include "algorithms/algorithms.hpp"
#include "util/errors.hpp"
#include "util/suggest.hpp"

namespace collsim {

std::string_view collective_name(Collective collective) {
  switch (collective) {
    case Collective::allreduce: return "allreduce";
    case Collective::broadcast: return "broadcast";
    case Collective::reduce: return "reduce";
  }
  return "allreduce";
}

std::vector<std::string> collective_names() { return {"allreduce", "broadcast", "reduce"}; }

Collective parse_collective(std::string_view name, std::string_view field) {
  for (Collective c : {Collective::allreduce, Collective::broadcast, Collective::reduce})
    if (collective_name(c) == name) return c;
  throw InputError(fmt::format("{}: unknown collective '{}'{}; allowed: {}", field, name,
                               did_you_mean(name, collective_names()), join(collective_names())));
}

const std::vector<AlgorithmInfo>& all_algorithms() {
  static const std::vector<AlgorithmInfo> algorithms{
      {Collective::allreduce, "naive", "flat reduce to the root, then flat broadcast: 2(alpha + (p-1) n/B)",
       allreduce_naive, model_allreduce_naive},
      {Collective::allreduce, "naive-binomial",
       "binomial-tree reduce, then binomial-tree broadcast: 2 ceil(log2 p)(alpha + n/B)", allreduce_naive_binomial,
       model_allreduce_naive_binomial},
      {Collective::allreduce, "ring",
       "ring reduce-scatter then ring allgather (Patarasuk & Yuan 2009): 2(p-1)(alpha + n/(pB))", allreduce_ring,
       model_allreduce_ring},
      {Collective::broadcast, "binomial", "binomial tree, whole message per round: ceil(log2 p)(alpha + n/B)",
       broadcast_binomial, model_broadcast_binomial},
      {Collective::broadcast, "flat", "root sends to every rank at once: alpha + (p-1) n/B", broadcast_flat,
       model_broadcast_flat},
      {Collective::broadcast, "pipeline",
       "chain from the root, message cut into segments: (p+k-2)(alpha + n/(kB)) for k segments",
       broadcast_pipeline, model_broadcast_pipeline},
      {Collective::reduce, "binomial", "binomial tree towards the root: ceil(log2 p)(alpha + n/B)", reduce_binomial,
       model_reduce_binomial},
      {Collective::reduce, "flat", "every rank sends to the root at once: alpha + (p-1) n/B", reduce_flat,
       model_reduce_flat},
  };
  return algorithms;
}

std::vector<std::string> algorithm_names(Collective collective) {
  std::vector<std::string> names;
  for (const auto& a : all_algorithms())
    if (a.collective == collective) names.push_back(a.name);
  return names;
}

const AlgorithmInfo& find_algorithm(Collective collective, const std::string& name, std::string_view field) {
  for (const auto& a : all_algorithms())
    if (a.collective == collective && a.name == name) return a;
  const auto names = algorithm_names(collective);
  throw InputError(fmt::format("{}: unknown {} algorithm '{}'{}; allowed: {}", field, collective_name(collective),
                               name, did_you_mean(name, names), join(names)));
}

}  // namespace collsim
