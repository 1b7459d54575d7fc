// `collsim validate`: check a scenario and its platform without running it.
#include <memory>

#include "cli/command.hpp"
#include "cli/scenario_flags.hpp"

namespace collsim::cli {

Command add_validate_command(CLI::App& app) {
  struct Flags {
    RunRequest request;
    ScenarioFlags scenario;
    bool plan = false;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* validate = app.add_subcommand("validate", "Check a scenario (and its platform) without running it");
  add_scenario_flags(validate, flags->scenario, flags->request);
  validate->add_flag("--plan", flags->plan,
                     "Print the run's plan as JSON instead: the platform built, where each rank runs, the payload, "
                     "the algorithm chosen and why (auto's trials run first), the cost model and bounds, the faults' "
                     "targets, the limits checked (docs/trace-format.md#plan)");
  return {validate, [flags] {
            flags->scenario.append_overrides(flags->request.overrides);
            return command_validate(flags->request, flags->plan);
          }};
}

}  // namespace collsim::cli
