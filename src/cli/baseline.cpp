// `collsim baseline update`: run every ready scenario and write its baseline.
#include <memory>

#include "cli/command.hpp"
#include "report/commands.hpp"

namespace collsim::cli {

Command add_baseline_command(CLI::App& app) {
  struct Flags {
    std::string scenarios_dir = std::string(COLLSIM_SOURCE_DIR) + "/scenarios";
    std::string baselines_dir = std::string(COLLSIM_SOURCE_DIR) + "/tests/baselines";
    bool quiet = false;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* baseline = app.add_subcommand("baseline", "Regenerate the baselines of the ready scenarios");
  baseline->require_subcommand(1);
  CLI::App* update =
      baseline->add_subcommand("update", "Run every scenario and write its baseline (one small JSON file each)");
  update->add_option("--scenarios", flags->scenarios_dir, "Folder of scenarios (default: the repository's)");
  update->add_option("--out", flags->baselines_dir, "Folder of baselines (default: tests/baselines)");
  update->add_flag("--quiet,-q", flags->quiet, "Print nothing but errors");
  return {update, [flags] { return command_baseline_update(flags->scenarios_dir, flags->baselines_dir, flags->quiet); }};
}

}  // namespace collsim::cli
