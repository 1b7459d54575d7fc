#pragma once
// Flags that `run` and `validate` share: the scenario file and the fields a flag overrides.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "report/commands.hpp"

namespace collsim::cli {

// Flags that stand for scenario fields, applied after --set (flags win).
struct ScenarioFlags {
  std::string collective, algorithm, auto_by, workers, size, dtype, op, topology, network, overhead, rounds, channels,
      reduce_bandwidth;

  void append_overrides(std::vector<std::string>& overrides) const;
};

void add_scenario_flags(CLI::App* command, ScenarioFlags& flags, RunRequest& request);

// --topology's help: platform files and every generator's syntax.
std::string topology_help();

}  // namespace collsim::cli
