#pragma once
// Every collective setting is read by the algorithm that runs, or refused: a setting that
// changes nothing must not look as if it did (collective.root for the ring, channels for
// recursive doubling, an op for a broadcast).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "scenario/scenario.hpp"

namespace collsim {

// Throws InputError (one line: the field, what does not read it, what would) when
// `object`, the scenario's "collective", sets to other than its default a setting that
// spec's algorithm does not read: root, segment, servers, group_size, channels (the
// `[uses ...]` of `collsim list algorithms`), or op and reduce_bandwidth for a collective
// that reduces nothing. With algorithm "auto" the choice comes later: the plan notes it.
void check_settings_read(const nlohmann::json& object, const CollectiveSpec& spec);

// The settings `object` sets that `algorithm` does not read ("collective.segment"), for
// auto's note once it has chosen.
std::vector<std::string> settings_not_read(const CollectiveSpec& spec, const AlgorithmInfo& algorithm);

}  // namespace collsim
