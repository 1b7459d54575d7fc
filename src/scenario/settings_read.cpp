#include "scenario/settings_read.hpp"

#include <fmt/format.h>

#include "util/errors.hpp"
#include "util/suggest.hpp"

namespace collsim {
namespace {

// A setting of the `[uses ...]` kind, and whether the scenario gives it other than its default.
struct Setting {
  const char* key;
  bool Uses::* field;
  bool set;
};

// Whether `algorithm` reads `setting`: its `[uses ...]`, and the groups for channels too
// (channel c's rings turn by c members inside each locality group).
bool reads(const AlgorithmInfo& algorithm, const Setting& setting, const CollectiveSpec& spec) {
  if (setting.field == &Uses::groups && algorithm.uses.channels && spec.channels > 1) return true;
  // hierarchical's NVLS level with the ring between nodes runs chunk by chunk (algorithms/hierarchy.hpp)
  if (setting.field == &Uses::segment && algorithm.name == "hierarchical" && spec.intra == HierarchyLevel::nvls)
    return true;
  return algorithm.uses.*setting.field;
}

std::vector<Setting> settings_of(const CollectiveSpec& spec) {
  const CollectiveSpec defaults;
  return {{"root", &Uses::root, spec.root != defaults.root},
          {"segment", &Uses::segment, spec.segment != defaults.segment},
          {"servers", &Uses::servers, spec.servers.has_value() && *spec.servers != 1},
          {"parameter_server", &Uses::servers, spec.parameter_server.given},
          {"group_size", &Uses::groups, spec.group_size.has_value()},
          {"channels", &Uses::channels, spec.channels != defaults.channels},
          {"intra", &Uses::levels, spec.intra != defaults.intra},
          {"inter", &Uses::levels, spec.inter != defaults.inter}};
}

// The algorithms that read a setting, for an error: "pipeline broadcast, binary-tree allreduce".
std::string readers_of(bool Uses::* field) {
  std::vector<std::string> names;
  for (const AlgorithmInfo& algorithm : all_algorithms())
    if (algorithm.uses.*field) names.push_back(fmt::format("{} {}", algorithm.name, collective_name(algorithm.collective)));
  return join(names);
}

bool reduces(Collective kind) {
  return kind == Collective::allreduce || kind == Collective::reduce || kind == Collective::reduce_scatter;
}

}  // namespace

void check_settings_read(const nlohmann::json& object, const CollectiveSpec& spec) {
  for (const char* key : {"op", "reduce_bandwidth"})
    if (!reduces(spec.kind) && object.contains(key) && (std::string_view(key) != "op" || spec.op != OpKind::sum))
      throw InputError(fmt::format("collective.{}: {} reduces nothing (only allreduce, reduce and reduce-scatter "
                                   "do); leave it out", key, collective_name(spec.kind)));
  for (const Setting& setting : settings_of(spec)) {
    if (!setting.set || !object.contains(setting.key)) continue;
    // auto (or nccl) chooses later: refused only when no algorithm it may choose reads it
    bool read = false;
    for (const AlgorithmInfo& algorithm : all_algorithms())
      if (algorithm.collective == spec.kind && (chosen_at_run_time(spec.algorithm) || algorithm.name == spec.algorithm))
        read = read || reads(algorithm, setting, spec);
    if (!read)
      throw InputError(fmt::format("collective.{}: {} {} does not read it (read by: {}); leave it out", setting.key,
                                   spec.algorithm, collective_name(spec.kind), readers_of(setting.field)));
  }
}

std::vector<UnreadSetting> settings_not_read(const CollectiveSpec& spec, const AlgorithmInfo& algorithm) {
  std::vector<UnreadSetting> unread;
  for (const Setting& setting : settings_of(spec))
    if (setting.set && !reads(algorithm, setting, spec)) unread.push_back({setting.key, readers_of(setting.field)});
  return unread;
}

}  // namespace collsim
