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
// that reduces nothing. With algorithm "auto" only when none of the collective's algorithms
// reads it; the plan notes it when the one auto chose does not.
void check_settings_read(const nlohmann::json& object, const CollectiveSpec& spec);

// The settings `spec` gives other than their defaults that `algorithm` does not read: each
// key ("segment") and the algorithms that read it, for auto's note once it has chosen and
// for `collsim model`'s flags.
struct UnreadSetting {
  std::string key;
  std::string read_by;  // "pipeline broadcast, binary-tree allreduce, ..."
};
std::vector<UnreadSetting> settings_not_read(const CollectiveSpec& spec, const AlgorithmInfo& algorithm);

}  // namespace collsim
