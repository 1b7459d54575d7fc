#include "plan/engine_setup.hpp"

#include <fmt/format.h>
#include <memory>
#include <simgrid/s4u/Engine.hpp>
#include <stdexcept>

#include "plan/nccl_run.hpp"
#include "platform/generator_spec.hpp"
#include "platform/network_model.hpp"
#include "util/atomic_file.hpp"
#include "util/errors.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

namespace {
// The value SimGrid ends up with for `key` among `options` (it applies them in order, the last
// one wins) and where that value came from; empty if none sets it.
std::pair<std::string, std::string> last_setting(const SimGridOptions& options, const std::string& key) {
  std::pair<std::string, std::string> setting;
  for (const auto& [option, field] : options)
    if (option.rfind(key + ":", 0) == 0) setting = {option.substr(key.size() + 1), field};
  return setting;
}
}  // namespace

bool transfers_without_latency(const Scenario& scenario) {
  // A fault may give a link a latency mid-run.
  for (const FaultSpec& fault : scenario.faults)
    if (fault.latency && *fault.latency > 0) return false;
  // NCCL's runs carry every hop's latency in collsim's transport, and so do GPU transports on
  // a platform whose hosts are all GPUs (platform.hpp, PlatformOptions: the links' latency
  // is set to 0); a generator's spec says so before the platform exists, a file does not.
  try {
    if (runs_nccl(scenario)) return true;
    const std::optional<GeneratorSpec> generator = parse_generator(scenario.topology, "topology");
    return generator && gpus_only(*generator) && wants_gpu_transport(scenario);
  } catch (const InputError&) {
    return false;  // an unknown algorithm or topology: planning refuses it, naming its field
  }
}

SimGridOptions simgrid_options(const Scenario& scenario, const std::vector<std::string>& user_cfg) {
  SimGridOptions options;
  for (const auto& option : network_model_config(scenario.network)) options.emplace_back(option, "network");
  // SimGrid 3.32's selective update (its default network/optim:Lazy needs it; Full can use
  // it) re-solves, when a transfer's latency ends, only from the first link of its route:
  // when several latencies end in one step with that first link already marked modified,
  // their other links are left out of the sharing, and the transfers run faster than those
  // links allow (4 hosts sending 4, 8 and 12 MB to 3 hosts over 10 GB/s links with 10 us
  // latency: the 8 MB flows end at 2.42 ms instead of 3.22 ms; SIMGRID-NOTES.md,
  // docs/performance.md). Full update without selective update solves every link each step:
  // exact, at a CPU cost that grows with the transfers in flight once they desynchronise
  // (measured 1.0-1.7x on the shipped scenarios, 5.8x on a 1,024-rank fat tree under a slow NIC).
  // Where no transfer has a latency (GPU platforms whose transport carries it), no variable
  // is ever enabled late, and SimGrid's Lazy update is exact: collsim keeps it there (1.3x
  // faster on a 16-node DGX H100 NCCL allreduce, far more with thousands of flows in flight;
  // docs/performance.md). A choice of network/optim in the scenario or --cfg wins.
  // the scenario's and the user's own options, applied last
  SimGridOptions asked;
  for (size_t i = 0; i < scenario.cfg.size(); ++i) asked.emplace_back(scenario.cfg[i], fmt::format("cfg.{}", i));
  for (const auto& option : user_cfg) asked.emplace_back(option, "--cfg");
  const std::string optim = last_setting(asked, "network/optim").first;
  const bool selective_set = !last_setting(asked, "network/maxmin-selective-update").first.empty();
  if (optim.empty() && !selective_set && transfers_without_latency(scenario)) {
    options.emplace_back("network/optim:Lazy", "collsim");
  } else if (optim != "Lazy") {
    options.emplace_back("network/optim:Full", "collsim");
    options.emplace_back("network/maxmin-selective-update:no", "collsim");
  }
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
  options.insert(options.end(), asked.begin(), asked.end());
  return options;
}

void check_simgrid_options(const SimGridOptions& options) {
  for (const auto& [option, field] : options) check_simgrid_option(option, field);
  // SimGrid applies them in order, the last of a key wins; Lazy update without selective
  // update stops SimGrid when it builds the platform, under a field that is not at fault.
  const std::string optim = last_setting(options, "network/optim").first;
  const auto [selective, selective_field] = last_setting(options, "network/maxmin-selective-update");
  const bool off = selective == "0" || selective == "no" || selective == "false" || selective == "off";
  if (optim == "Lazy" && off)
    throw InputError(fmt::format("{}: network/maxmin-selective-update:{} is refused with network/optim:Lazy (SimGrid's "
                                 "lazy update needs its selective update); use network/optim:Full with it, collsim's "
                                 "default",
                                 selective_field, selective));
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
