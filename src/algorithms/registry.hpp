#pragma once
// The algorithms collsim knows, by collective and name, each with its one-line summary
// and its cost formula. Names are unique within a collective.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/collective.hpp"
#include "algorithms/partners.hpp"
#include "model/cost_model.hpp"
#include "algorithms/schedule.hpp"

namespace collsim {

struct AlgorithmInfo {
  Collective collective;
  std::string name;
  std::string summary;
  AlgorithmFn run;
  ModelFn model;                                 // its schedule priced on the model's network
  Schedule (*schedule)(const ModelInput& in);    // algorithms/schedules.hpp
  // Which ranks talk: the cost model's alpha and B are the worst of their routes.
  PartnersFn partners = ring_and_root_partners;
};

const std::vector<AlgorithmInfo>& all_algorithms();

// Throws InputError naming `field`, with "did you mean" and the allowed names.
const AlgorithmInfo& find_algorithm(Collective collective, const std::string& name, std::string_view field);

std::vector<std::string> algorithm_names(Collective collective);

// The reduce-scatter and the allgather an allreduce algorithm is made of, which sharded
// training runs apart: ring -> (ring, ring), rabenseifner -> (recursive-halving,
// recursive-doubling); none for the others.
std::optional<std::pair<std::string, std::string>> allreduce_halves(const std::string& allreduce);

}  // namespace collsim
