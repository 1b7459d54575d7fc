#pragma once
// A fat tree's routes from its structure (model/generated_network.hpp): SimGrid 3.32's
// FatTreeZone (src/kernel/routing/FatTreeZone.cpp) as collsim builds it (fat-tree:..., no
// limiter or loopback links): the same switches, labels, links and their names, and the
// same d-mod-k route up and down, its quirks included.
#include <memory>

#include "platform/generator_spec.hpp"

namespace collsim {

class GeneratedStructure;

std::shared_ptr<const GeneratedStructure> fat_tree_structure(const FatTreeSpec& tree);

}  // namespace collsim
