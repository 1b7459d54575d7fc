#pragma once
// The algorithms collsim knows, by collective and name, each with its one-line summary
// and its cost formula. Names are unique within a collective.
#include <string>
#include <vector>

#include "algorithms/collective.hpp"
#include "algorithms/partners.hpp"
#include "model/cost_model.hpp"
#include "algorithms/schedule.hpp"

namespace collsim {

// The scenario fields an algorithm reads besides the vector (the others do not change its
// messages): what `collsim list algorithms` shows, what the tests vary, what the trace and
// the limits consider.
struct Uses {
  bool root = false;     // collective.root: broadcast, reduce, and the allreduces that meet at one rank
  bool segment = false;  // collective.segment: the vector is pipelined in segments
  bool servers = false;  // collective.servers: ranks 0 .. servers-1 serve shards
  bool groups = false;   // the platform's zones or collective.group_size
  bool channels = false; // collective.channels: slices of the vector on concurrent rings
};

struct AlgorithmInfo {
  Collective collective;
  std::string name;
  std::string summary;
  AlgorithmFn run;
  ModelFn model;                                 // its schedule priced on the model's network
  Schedule (*schedule)(const ModelInput& in);    // algorithms/schedules.hpp
  // Which ranks talk: the cost model's alpha and B are the worst of their routes.
  PartnersFn partners = ring_and_root_partners;
  Uses uses = {};
};

const std::vector<AlgorithmInfo>& all_algorithms();

// "root, segment", or "" when it reads none of them.
std::string uses_names(const Uses& uses);

// Throws InputError naming `field`, with "did you mean" and the allowed names.
const AlgorithmInfo& find_algorithm(Collective collective, const std::string& name, std::string_view field);

std::vector<std::string> algorithm_names(Collective collective);

}  // namespace collsim
