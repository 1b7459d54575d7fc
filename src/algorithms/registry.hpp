#pragma once
// The algorithms collsim knows, by collective and name, each with its one-line summary
// and its cost formula. Names are unique within a collective.
#include <string>
#include <vector>

#include "algorithms/collective.hpp"
#include "model/cost_model.hpp"

namespace collsim {

// Whose routes the cost model reads alpha and B from: the worst route between ranks that
// talk. Ring algorithms only ever talk to their ring neighbours; for the others collsim
// takes the ring neighbours and the root with every rank (an approximation of their
// partners: trees and butterflies talk to farther ranks too).
enum class Partners { ring_and_root, ring };

struct AlgorithmInfo {
  Collective collective;
  std::string name;
  std::string summary;
  AlgorithmFn run;
  ModelFn model;
  Partners partners = Partners::ring_and_root;
};

const std::vector<AlgorithmInfo>& all_algorithms();

// Throws InputError naming `field`, with "did you mean" and the allowed names.
const AlgorithmInfo& find_algorithm(Collective collective, const std::string& name, std::string_view field);

std::vector<std::string> algorithm_names(Collective collective);

}  // namespace collsim
