#include "plan/engine_setup.hpp"

#include <fmt/format.h>
#include <memory>
#include <simgrid/s4u/Engine.hpp>
#include <stdexcept>

#include "platform/network_model.hpp"
#include "util/atomic_file.hpp"
#include "util/errors.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

SimGridOptions simgrid_options(const Scenario& scenario, const std::vector<std::string>& user_cfg) {
  SimGridOptions options;
  for (const auto& option : network_model_config(scenario.network)) options.emplace_back(option, "network");
  // SimGrid ends, at each time step, every transfer or computation due within
  // surf/precision after it. Its default, 1 ns, is coarser than a short reduction (64 B at
  // 100 GB/s: 0.64 ns, rounded away) and lets any timer (a recovery check) that fires just
  // before another transfer's end move that end: 1 ps keeps both exact, at the same speed
  // (docs/performance.md). Users can set it back with --cfg.
  options.emplace_back("surf/precision:1e-12", "collsim");
#ifdef COLLSIM_SANITIZE
  // ASan follows real thread stacks, not raw context switches (CMakeLists.txt).
  options.emplace_back("contexts/factory:thread", "collsim");
#else
  // Small actor stacks without guard pages keep p=1024 fast (our actors are shallow:
  // algorithms loop, they do not recurse); users can override both.
  options.emplace_back("contexts/stack-size:64", "collsim");
  options.emplace_back("contexts/guard-size:0", "collsim");
#endif
  for (size_t i = 0; i < scenario.cfg.size(); ++i) options.emplace_back(scenario.cfg[i], fmt::format("cfg.{}", i));
  for (const auto& option : user_cfg) options.emplace_back(option, "--cfg");
  return options;
}

void check_simgrid_options(const SimGridOptions& options) {
  for (const auto& [option, field] : options) check_simgrid_option(option, field);
}

sg4::Engine& create_engine(const SimGridOptions& options, SimGridGuard& guard) {
  static bool engine_created = false;
  if (engine_created) throw std::logic_error("create_engine: SimGrid allows one engine per process");
  engine_created = true;

  // The engine lives until the process ends: SimGrid cannot make a second one anyway.
  // Options the engine reads while it is created (the context factory) go in its
  // command line: set afterwards, SimGrid would silently ignore them.
  std::vector<std::string> arguments{"collsim", "--log=root.thresh:warning", "--log=no_loc"};
  for (const auto& [option, field] : options)
    if (option.rfind("contexts/factory:", 0) == 0) arguments.push_back("--cfg=" + option);
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(arguments.size());
  static std::unique_ptr<sg4::Engine> engine = std::make_unique<sg4::Engine>(&argc, argv.data());
  guard.catch_crashes();
  remove_temporaries_on_interrupt();  // the engine installed its own SIGINT handler
  guard.set_context("SimGrid options");
  // Options one by one, so that an error names the one at fault and where it came from.
  for (const auto& [option, field] : options) {
    if (option.rfind("contexts/factory:", 0) == 0) continue;  // given at creation
    try {
      sg4::Engine::set_config(option);
    } catch (const std::exception& error) {
      const std::string message = error.what();
      throw InputError(fmt::format("{}: {}: {}", field, option, message.substr(0, message.find('\n'))));
    }
  }
  return *engine;
}

}  // namespace collsim
