#pragma once
// The command line: one file per `collsim` command. Each add_*_command declares its
// command's flags on the app and returns what to do when that command was given; the
// flags' storage lives in the returned action, so nothing outlives a parse but the app.
#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

namespace collsim::cli {

struct Command {
  CLI::App* app = nullptr;    // the subcommand (parsed() says whether it was given)
  std::function<int()> run;   // turns its flags into library calls; exit status
};

// The tool's description, exit statuses, examples and --version.
void describe_app(CLI::App& app);

Command add_run_command(CLI::App& app);
Command add_validate_command(CLI::App& app);
Command add_list_command(CLI::App& app);
Command add_model_command(CLI::App& app);
Command add_render_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_baseline_command(CLI::App& app);
Command add_check_command(CLI::App& app);
// `sweep` and its subcommands `plot` and `merge`: the most specific first.
std::vector<Command> add_sweep_commands(CLI::App& app);

}  // namespace collsim::cli
