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

// The SimGrid property, "yes" on both halves, of a link between two switches that is no
// host's device: a leaf's uplink to the spine, a rail's uplink. It may be the only way to
// some ranks, and still none of theirs: recovery never blames a rank for it (issue #48,
// docs/recovery.md rule 4f). A node's NIC, shared by its GPUs, is the node's own: unmarked.
inline constexpr const char* switch_link_property = "switch_link";

}  // namespace collsim
