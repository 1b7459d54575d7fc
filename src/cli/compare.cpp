// `collsim compare`: simulated timings against a baseline; exit 1 on a regression.
#include <memory>

#include "cli/command.hpp"
#include "report/commands.hpp"

namespace collsim::cli {

Command add_compare_command(CLI::App& app) {
  auto request = std::make_shared<CompareRequest>();
  CLI::App* compare = app.add_subcommand(
      "compare", "Compare simulated timings against a baseline; exit 1 on a regression or a missing entry");
  compare->add_option("baseline", request->baseline, "Baseline: a trace, baseline file, results table or folder")
      ->required();
  compare->add_option("current", request->current, "Current: the same kinds of input")->required();
  compare->add_option("--tolerance", request->tolerances,
                      "Relative tolerance (default 0.5%), or METRIC=TOL for one metric (repeatable); parallel traces "
                      "add step_time, comm_time.NAME and exposed_time.NAME per communicator, tokens_per_second, mfu, "
                      "bubble_fraction")
      ->allow_extra_args(false);
  compare->add_flag("--strict", request->strict,
                    "Exit 1 on any change: improvements and new entries as well as regressions and missing entries "
                    "(then the baselines must be updated)");
  compare->add_option("--format", request->format, "text (default), markdown or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  return {compare, [request] { return command_compare(*request); }};
}

}  // namespace collsim::cli
