#include "sim/simulation.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <memory>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <stdexcept>

#include "comm/comm_group.hpp"
#include "platform/platform.hpp"
#include "sim/input_data.hpp"
#include "sim/simgrid_guard.hpp"
#include "util/errors.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

struct RankTimes {
  double start = 0, compute_end = 0, collective_start = 0, end = 0;
};

// Ranks map to hosts in platform order, or as the scenario's placement says.
std::vector<sg4::Host*> place_ranks(const Scenario& scenario, const PlatformInfo& platform, int workers,
                                    const sg4::Engine& engine) {
  if (workers > static_cast<int>(platform.hosts.size()))
    throw InputError(fmt::format("workers: {} workers but '{}' has only {} hosts", workers, platform.source,
                                 platform.hosts.size()));
  if (scenario.placement.empty())
    return std::vector<sg4::Host*>(platform.hosts.begin(), platform.hosts.begin() + workers);
  if (static_cast<int>(scenario.placement.size()) != workers)
    throw InputError(fmt::format("placement: {} host(s) listed for {} workers", scenario.placement.size(), workers));
  std::vector<sg4::Host*> hosts;
  for (size_t i = 0; i < scenario.placement.size(); ++i) {
    sg4::Host* host = engine.host_by_name_or_null(scenario.placement[i]);
    if (host == nullptr)
      throw InputError(fmt::format("placement.{}: no host '{}' in '{}'", i, scenario.placement[i], platform.source));
    if (std::find(hosts.begin(), hosts.end(), host) != hosts.end())
      throw InputError(fmt::format("placement.{}: host '{}' is listed twice", i, scenario.placement[i]));
    hosts.push_back(host);
  }
  return hosts;
}

// The model's alpha and B: the worst route between ranks that talk to each other
// (ring neighbours, and the root with everyone).
void read_route_costs(const std::vector<sg4::Host*>& hosts, int root, ModelInput& model) {
  const int p = static_cast<int>(hosts.size());
  if (p == 1) {
    model.alpha = 0;
    model.bandwidth = std::numeric_limits<double>::infinity();
    return;
  }
  model.alpha = 0;
  model.bandwidth = std::numeric_limits<double>::infinity();
  auto consider = [&](int a, int b) {
    if (a == b) return;
    const RouteCost cost = route_cost(hosts[static_cast<size_t>(a)], hosts[static_cast<size_t>(b)]);
    model.alpha = std::max(model.alpha, cost.latency);
    model.bandwidth = std::min(model.bandwidth, cost.bandwidth);
  };
  for (int r = 0; r < p; ++r) {
    consider(r, (r + 1) % p);
    consider(root, r);
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> simgrid_options(const Scenario& scenario,
                                                                const std::vector<std::string>& user_cfg) {
  std::vector<std::pair<std::string, std::string>> options;
  for (const auto& option : network_model_config(scenario.network)) options.emplace_back(option, "network");
  // Small actor stacks without guard pages keep p=1024 fast (our actors are shallow:
  // algorithms loop, they do not recurse); users can override both.
  options.emplace_back("contexts/stack-size:64", "collsim");
  options.emplace_back("contexts/guard-size:0", "collsim");
  for (size_t i = 0; i < scenario.cfg.size(); ++i) options.emplace_back(scenario.cfg[i], fmt::format("cfg.{}", i));
  for (const auto& option : user_cfg) options.emplace_back(option, "--cfg");
  return options;
}

SimResult run_simulation(const Scenario& scenario, const SimOptions& options) {
  static bool engine_created = false;
  if (engine_created) throw std::logic_error("run_simulation: SimGrid allows one engine per process");
  engine_created = true;

  const auto settings = simgrid_options(scenario, options.cfg);
  for (const auto& [option, field] : settings) check_simgrid_option(option, field);

  // The engine lives until the process ends: SimGrid cannot make a second one anyway.
  std::string program = "collsim", quiet = "--log=root.thresh:warning", no_location = "--log=no_loc";
  char* argv[] = {program.data(), quiet.data(), no_location.data(), nullptr};
  int argc = 3;
  SimGridGuard guard;
  static std::unique_ptr<sg4::Engine> engine = std::make_unique<sg4::Engine>(&argc, argv);
  guard.catch_crashes();
  guard.set_context("SimGrid options");
  // Options one by one, so that an error names the one at fault and where it came from.
  for (const auto& [option, field] : settings) {
    try {
      sg4::Engine::set_config(option);
    } catch (const std::exception& error) {
      const std::string message = error.what();
      throw InputError(fmt::format("{}: {}: {}", field, option, message.substr(0, message.find('\n'))));
    }
  }

  SimResult result;
  guard.set_context(fmt::format("topology: SimGrid stopped on '{}'", scenario.topology));
  const PlatformInfo platform = build_platform(*engine, scenario.topology, scenario.source_dir);
  const int p = scenario.workers.value_or(static_cast<int>(platform.hosts.size()));
  if (scenario.collective.root >= p)
    throw InputError(fmt::format("collective.root: {} is not a rank; allowed: 0 to {}", scenario.collective.root, p - 1));
  const std::vector<sg4::Host*> hosts = place_ranks(scenario, platform, p, *engine);

  result.workers = p;
  result.topology = platform.source;
  result.platform_kind = platform.kind;
  result.link_count = platform.link_count;
  for (const sg4::Host* host : platform.hosts) result.all_hosts.push_back(host->get_name());
  for (const sg4::Host* host : hosts) result.rank_hosts.push_back(host->get_name());
  result.algorithm = &find_algorithm(scenario.collective.kind, scenario.collective.algorithm, "collective.algorithm");
  result.payload = plan_payload(scenario.collective.size, scenario.collective.dtype, p,
                                scenario.collective.carried_elements);
  if (result.payload.downscaled())
    result.notes.push_back(fmt::format("memory holds {} of the {} elements per rank; each stands for {:g} bytes",
                                       result.payload.carried_elems, result.payload.logical_elems,
                                       result.payload.bytes_per_elem));

  ModelInput& model = result.model;
  model.p = p;
  model.elems = result.payload.carried_elems;
  model.bytes_per_elem = result.payload.bytes_per_elem;
  model.segment_elems = std::max<size_t>(
      1, static_cast<size_t>(std::llround(scenario.collective.segment / result.payload.bytes_per_elem)));
  if (scenario.collective.kind == Collective::broadcast && result.algorithm->name == "pipeline") {
    const double effective = static_cast<double>(simulated_bytes(model.segment_elems, model.bytes_per_elem));
    if (effective != scenario.collective.segment)
      result.notes.push_back(fmt::format("segments of {} bytes (the requested {} bytes rounded to whole carried elements)",
                                         effective, scenario.collective.segment));
  }
  if (scenario.collective.carried_elements && *scenario.collective.carried_elements > result.payload.logical_elems)
    result.notes.push_back(fmt::format("carried_elements {} is more than the {} elements of the message: carrying {}",
                                       *scenario.collective.carried_elements, result.payload.logical_elems,
                                       result.payload.carried_elems));
  read_route_costs(hosts, scenario.collective.root, model);
  if (options.check_only) return result;

  const InputFn input = options.input ? options.input : [&](int rank, Buffer& buf) {
    fill_input(buf, rank, scenario.collective.op, scenario.seed);
  };
  const ReduceOp op(scenario.collective.op, scenario.collective.dtype);
  const CollectiveArgs args{&op, scenario.collective.root, model.segment_elems};
  const int rounds = scenario.training.rounds;

  std::vector<int> everyone(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) everyone[static_cast<size_t>(r)] = r;
  CommGroup group(0, everyone, result.payload.bytes_per_elem, result.messages);
  result.results.assign(static_cast<size_t>(p), Buffer());
  std::vector<std::vector<RankTimes>> times(static_cast<size_t>(rounds), std::vector<RankTimes>(static_cast<size_t>(p)));
  std::exception_ptr failure;

  for (int r = 0; r < p; ++r) {
    sg4::Actor::create(fmt::format("rank-{}", r), hosts[static_cast<size_t>(r)], [&, r] {
      try {
        Comm comm(group, r);
        Buffer& buf = result.results[static_cast<size_t>(r)];
        buf = Buffer(scenario.collective.dtype, result.payload.carried_elems);
        for (int round = 0; round < rounds; ++round) {
          RankTimes& t = times[static_cast<size_t>(round)][static_cast<size_t>(r)];
          comm.set_round(round);
          t.start = sg4::Engine::get_clock();
          input(r, buf);
          if (scenario.training.compute > 0)
            sg4::this_actor::execute(scenario.training.compute * sg4::this_actor::get_host()->get_speed());
          if (scenario.training.compute_flops > 0) sg4::this_actor::execute(scenario.training.compute_flops);
          t.compute_end = t.collective_start = sg4::Engine::get_clock();
          result.algorithm->run(comm, buf, args);
          const bool holds_result = scenario.collective.kind != Collective::reduce || r == args.root;
          if (holds_result && scenario.collective.kind != Collective::broadcast) op.finalize(buf.all(), p);
          t.end = sg4::Engine::get_clock();
        }
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
    });
  }
  engine->run();
  if (failure) std::rethrow_exception(failure);

  result.simulated_time = sg4::Engine::get_clock();
  for (int round = 0; round < rounds; ++round) {
    const auto& rt = times[static_cast<size_t>(round)];
    RoundRecord record;
    record.round = round;
    record.group = everyone;
    record.start = std::min_element(rt.begin(), rt.end(), [](auto& a, auto& b) { return a.start < b.start; })->start;
    record.compute_end =
        std::max_element(rt.begin(), rt.end(), [](auto& a, auto& b) { return a.compute_end < b.compute_end; })->compute_end;
    record.collective_start =
        std::min_element(rt.begin(), rt.end(), [](auto& a, auto& b) { return a.collective_start < b.collective_start; })
            ->collective_start;
    record.end = std::max_element(rt.begin(), rt.end(), [](auto& a, auto& b) { return a.end < b.end; })->end;
    result.rounds.push_back(record);
  }
  return result;
}

}  // namespace collsim
