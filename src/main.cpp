// collsim: simulate collective communication algorithms on SimGrid platforms.
// This file only builds the command line from src/cli/ (one file per command) and turns
// what a command throws into the exit statuses of the README: 1 run failed, 2 bad input.
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <string_view>

#include "cli/command.hpp"
#include "cli/validators.hpp"
#include "util/atomic_file.hpp"
#include "util/errors.hpp"
#include "util/suggest.hpp"

#if __has_include(<mimalloc.h>) && !defined(COLLSIM_SANITIZE)
#include <mimalloc.h>
// Weak: a build without mimalloc (-DCOLLSIM_MIMALLOC=OFF, a student's build) finds no such
// function and skips it.
#pragma weak mi_option_set
#define COLLSIM_CAN_TUNE_MIMALLOC 1
#endif

namespace {

constexpr int exit_bad_input = 2;

// `collsim model` builds and frees hundreds of MiB of schedules, one algorithm after another
// (p = 131,072: 26 of them); mimalloc gives freed memory back to the system after 25 ms, so
// the kernel cleared the same pages again and again: 1 to 4 s of system time in 10 to 15 s
// of CPU. The model keeps freed memory for 10 s instead (its peak grows by about 100 MiB).
void keep_freed_memory_for_the_model(int argc, char** argv) {
#ifdef COLLSIM_CAN_TUNE_MIMALLOC
  if (argc > 1 && std::string_view(argv[1]) == "model" && &mi_option_set != nullptr)
    mi_option_set(mi_option_decommit_delay, 10000);
#else
  (void)argc;
  (void)argv;
#endif
}

// The given command, or an error line: CLI11 alone says only "A subcommand is required".
bool is_known_command(const CLI::App& app, const std::string& name) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands({})) names.push_back(command->get_name());
  if (std::find(names.begin(), names.end(), name) != names.end()) return true;
  std::cerr << fmt::format("collsim: error: unknown command '{}'; allowed: {} (see collsim --help)\n", name,
                           collsim::join(names));
  return false;
}

int run_given_command(const CLI::App& app, const std::vector<collsim::cli::Command>& commands) {
  try {
    collsim::cli::refuse_empty_values(app);
    for (const auto& command : commands)
      if (command.app->parsed()) return command.run();
  } catch (const collsim::InputError& error) {
    std::cerr << "collsim: error: " << collsim::one_line(error.what()) << "\n";
    return exit_bad_input;
  } catch (const std::filesystem::filesystem_error& error) {
    // a path the user gave (a name too long, a folder that cannot be searched)
    std::cerr << fmt::format("collsim: error: '{}': {}\n", collsim::clipped(error.path1().string()),
                             error.code().message());
    return exit_bad_input;
  } catch (const std::bad_alloc&) {
    std::cerr << "collsim: error: out of memory (see the limits in the README; carry fewer elements or use fewer "
                 "ranks)\n";
    return exit_bad_input;
  } catch (const std::length_error&) {  // a container asked for more than it can ever hold
    std::cerr << "collsim: error: out of memory (see the limits in the README; carry fewer elements or use fewer "
                 "ranks)\n";
    return exit_bad_input;
  } catch (const std::exception& error) {
    std::cerr << "collsim: internal error: " << collsim::one_line(error.what())
              << " (a bug, not a problem of the input: please report it with the command)\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app;
  namespace cli = collsim::cli;
  cli::describe_app(app);
  std::vector<cli::Command> commands{cli::add_run_command(app),     cli::add_validate_command(app),
                                     cli::add_list_command(app),    cli::add_model_command(app),
                                     cli::add_render_command(app),  cli::add_compare_command(app),
                                     cli::add_baseline_command(app), cli::add_check_command(app)};
  for (auto& command : cli::add_sweep_commands(app)) commands.push_back(std::move(command));
  if (argc > 1 && argv[1][0] != '-' && !is_known_command(app, argv[1])) return exit_bad_input;

  collsim::remove_temporaries_on_interrupt();
  keep_freed_memory_for_the_model(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const CLI::ParseError& error) {
    std::cerr << fmt::format("collsim: error: {} (see collsim --help)\n", collsim::one_line(error.what()));
    return exit_bad_input;
  }
  return run_given_command(app, commands);
}
