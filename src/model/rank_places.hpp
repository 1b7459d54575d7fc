#pragma once
// Where the ranks sit on the platform, as the topology bound (model/cut_bound.hpp) and the
// locality groups (plan/locality.hpp) read it: without SimGrid, so that a platform known
// from its generator's structure (model/generated_network.hpp) and one built in SimGrid
// (plan/planner.cpp) give the same answers.
#include <cstddef>
#include <string>
#include <vector>

namespace collsim {

struct RankPlaces {
  std::vector<size_t> position;         // by rank: its host's place in platform order
  std::vector<int> zone;                // by rank: its host's englobing zone, an index into zone_names
  std::vector<std::string> zone_names;  // in the order of their first rank
  std::vector<std::string> node;        // by rank: its host's property `node`; empty unless every host has one
  size_t ranks() const { return position.size(); }
};

}  // namespace collsim
