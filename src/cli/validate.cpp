// `collsim validate`: check a scenario and its platform without running it.
#include <memory>

#include "cli/command.hpp"
#include "cli/scenario_flags.hpp"

namespace collsim::cli {

Command add_validate_command(CLI::App& app) {
  struct Flags {
    RunRequest request;
    ScenarioFlags scenario;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* validate = app.add_subcommand("validate", "Check a scenario (and its platform) without running it");
  add_scenario_flags(validate, flags->scenario, flags->request);
  return {validate, [flags] {
            flags->scenario.append_overrides(flags->request.overrides);
            return command_validate(flags->request);
          }};
}

}  // namespace collsim::cli
