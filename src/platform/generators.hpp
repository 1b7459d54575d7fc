#pragma once
// Builds a generated platform (a parsed generator string, generator_spec.hpp) with s4u.
#include <vector>

#include "platform/generator_spec.hpp"

namespace simgrid::s4u {
class Host;
}  // namespace simgrid::s4u

namespace collsim {

// Creates the zones, hosts and links in the current engine and returns the hosts in rank
// order: star, rack, torus, fat tree and dragonfly hosts are host-0, host-1, ... (SimGrid's
// leaf order for the clusters); nodes are node-major, node-0-dev-0 .. node-0-dev-(G-1), then
// node 1. Call once per engine, before the platform is sealed.
std::vector<simgrid::s4u::Host*> generate_platform(const GeneratorSpec& spec);

}  // namespace collsim
