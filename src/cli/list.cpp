// `collsim list`: algorithms, topologies, ready scenarios and sweeps, or the metrics of a run.
#include <memory>

#include "cli/command.hpp"
#include "report/commands.hpp"

namespace collsim::cli {

Command add_list_command(CLI::App& app) {
  auto what = std::make_shared<std::string>();
  CLI::App* list =
      app.add_subcommand("list", "List algorithms, topologies, ready scenarios, ready sweeps or the metrics of a run");
  list->add_option("what", *what,
                   "algorithms | topologies (files, and generators with an example each) | scenarios | sweeps "
                   "(scenarios/**/sweeps/) | metrics (name, unit, which way is better: what compare and sweep "
                   "tables use); default: all but metrics");
  return {list, [what] { return command_list(*what); }};
}

}  // namespace collsim::cli
