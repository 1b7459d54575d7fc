#pragma once
// Which ranks are close to each other: the locality groups that the hierarchical
// allreduce works in (the ranks of each platform zone, or blocks of collective.group_size
// ranks), and what its steps cost inside them and between them on this platform.
#include <string>
#include <vector>

#include "model/cost_model.hpp"
#include "model/rank_places.hpp"
#include "scenario/scenario.hpp"

namespace simgrid::s4u {
class Host;
}

namespace collsim {

struct RankLocality {
  std::vector<int> ids;      // by world rank: ranks with the same id form a group
  std::string source;        // how the groups were made, for people
};

// Blocks of collective.group_size consecutive ranks when given (rank r in block
// r / group_size); else, when every host has the property `node` (the rail generator's
// GPUs, or a platform file's <prop id="node" value="..."/>), its value; else each rank's
// host's zone (Host::get_englobing_zone).
RankLocality rank_locality(const Scenario& scenario, const RankPlaces& places);

// Where the ranks on `hosts` sit on the platform of `platform_hosts` (in platform order).
RankPlaces places_of(const std::vector<simgrid::s4u::Host*>& hosts,
                     const std::vector<simgrid::s4u::Host*>& platform_hosts);

// Sets the model's group sizes and the costs of the hierarchical allreduce's steps inside
// and between the groups: the routes of one step's messages, all at once, each link's
// bandwidth shared by the messages crossing it (model/network.hpp: shared_routes), on the
// model's platform routes (model.network, ranks as endpoints).
void read_hierarchy(const std::vector<int>& locality, ModelInput& model);

// One line for the run's notes: the groups, where they come from, and their costs.
std::string describe_hierarchy(const RankLocality& locality, const ModelInput& model);

}  // namespace collsim
