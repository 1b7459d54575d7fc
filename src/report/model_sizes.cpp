// `collsim model --sizes FROM:TO[:xFACTOR]`: the model's time for every size, one row each, as
// `collsim run --sizes` prints its runs (nccl-tests' columns), each row naming the variant it
// priced: the one named, NCCL's tuner's choice (nccl), or with all (auto) the fastest of
// collsim's algorithms and NCCL's variants by the model. Each size is priced in a child process
// (SimGrid builds one platform per process; nothing is simulated).
#include <algorithm>
#include <fmt/format.h>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "algorithms/registry.hpp"
#include "model/contention.hpp"
#include "model/cost_model.hpp"
#include "plan/auto_choice.hpp"
#include "plan/planner.hpp"
#include "plan/simgrid_guard.hpp"
#include "report/commands.hpp"
#include "report/size_table.hpp"
#include "run/nccl_auto.hpp"
#include "run/run_scenario.hpp"
#include "scenario/scenario.hpp"
#include "util/child_process.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace collsim {

namespace {

struct Priced {
  std::string variant;
  double time = std::numeric_limits<double>::infinity();
  int ranks = 0;  // the ranks priced (with a platform and no --workers: every host)
};

// The fastest of auto's candidates that the model prices (impractical ones aside).
Priced fastest_candidate(const std::vector<AutoCandidate>& candidates) {
  Priced best;
  for (const AutoCandidate& c : candidates)
    if (c.skipped.empty() && c.model_time < best.time)
      best = {c.channels > 1 ? fmt::format("{}/{}ch", c.algorithm, c.channels) : c.algorithm, c.model_time};
  return best;
}

// NCCL's fastest variant by the model (none off GPUs or for another collective).
Priced fastest_nccl_variant(const Scenario& scenario) {
  for (const NcclVariant& v : price_nccl_variants(scenario, true))
    if (v.why_not.empty())
      return {fmt::format("{}/{}/{}ch", nccl::registry_name(v.algo), nccl::proto_name(v.proto), v.channels), v.time};
  return {};
}

// On the alpha-beta star of --bandwidth and --latency.
Priced price_on_star(const ModelRequest& request, Collective collective) {
  const ModelInput in = formula_input(request);
  if (request.algorithm != "all") {
    const std::string name = request.algorithm.empty() ? default_algorithm(collective) : request.algorithm;
    const AlgorithmInfo& algorithm = find_algorithm(collective, name, "--algorithm");
    check_flags_read(request, collective, algorithm);
    return {algorithm.name, estimate_within_model_limits(algorithm, in).time, in.p};
  }
  Priced best = fastest_candidate(rank_by_model(collective, in, true));
  best.ranks = in.p;
  return best;
}

// On the platform's own routes, as `collsim model --topology` prices one size.
Priced price_on_platform(const ModelRequest& request) {
  const Scenario scenario = scenario_of(request);
  const bool all = request.algorithm == "all" || request.algorithm == "auto";
  // NCCL's variants first: each plans its own platform in a child, before this process's engine
  const Priced nccl = all ? fastest_nccl_variant(scenario) : Priced{};
  SimGridGuard guard;
  PlanOptions options;
  options.model_only = true;
  const RunPlan plan = plan_levels(scenario, options, guard);
  if (!all)
    return {variant_that_ran(plan.choice), estimate_within_model_limits(*plan.choice.algorithm, plan.model).time,
            plan.workers};
  Priced best = fastest_candidate(plan.choice.candidates);
  if (nccl.time < best.time) best = nccl;
  best.ranks = plan.workers;
  return best;
}

// A child's row: {"variant", "time"} (seconds).
std::string price_one_size(const ModelRequest& request, Collective collective) {
  const Priced priced = request.topology.empty() ? price_on_star(request, collective) : price_on_platform(request);
  if (!(priced.time < std::numeric_limits<double>::infinity()))
    throw InputError(fmt::format("--algorithm: no algorithm the model prices runs here at {}", request.size));
  return nlohmann::json{{"variant", priced.variant}, {"time", priced.time}, {"ranks", priced.ranks}}.dump();
}

}  // namespace

int command_model_sizes(const ModelRequest& request) {
  if (!request.size.empty()) throw InputError("--sizes: give --size or --sizes, not both");
  const Collective collective = parse_collective(request.collective, "--collective");
  const std::vector<double> sizes = parse_size_range(request.sizes, "--sizes");
  const Dtype dtype = parse_dtype(request.dtype, "--dtype");
  const double elem = static_cast<double>(dtype_size(dtype));
  std::vector<ModelRequest> requests;
  for (double size : sizes) {
    ModelRequest one = request;
    one.sizes.clear();
    // whole elements, at least one (nccl-tests' count)
    one.size = fmt::format("{:.0f}", std::max(1.0, std::floor(size / elem)) * elem);
    requests.push_back(one);
  }
  // the flags checked once, in this process, before any child: a bad one is one error, exit 2
  if (request.topology.empty()) (void)formula_input(requests.front());
  else (void)scenario_of(requests.front());
  std::vector<ChildOutcome> outcomes(requests.size());
  const int jobs = request.jobs > 0 ? request.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  run_children(
      requests.size(), jobs, [&](size_t i) { return price_one_size(requests[i], collective); },
      [&](size_t i, const ChildOutcome& outcome, double) { outcomes[i] = outcome; }, [] { return false; });
  for (const ChildOutcome& outcome : outcomes)
    if (outcome.exit_code == 2) throw InputError(outcome.output);
  const std::string place = request.topology.empty()
                                ? fmt::format("the star of {} and {}", request.bandwidth, request.latency)
                                : request.topology;
  int ranks = request.workers;
  for (const ChildOutcome& outcome : outcomes)
    if (outcome.exit_code == 0) ranks = nlohmann::json::parse(outcome.output)["ranks"].get<int>();
  std::string table = fmt::format("# collsim model: {} / {}, {} ranks on {}, by the model (nothing simulated)\n",
                                  collective_name(collective), request.algorithm.empty() ? default_algorithm(collective)
                                                                                         : request.algorithm,
                                  ranks, place);
  table += fmt::format("#{:>12} {:>12} {:>9} {:>11} {:>8} {:>8}  {}\n", "size", "count", "type", "time", "algbw",
                       "busbw", "variant");
  table += fmt::format("#{:>12} {:>12} {:>9} {:>11} {:>8} {:>8}\n", "(B)", "(elements)", "", "(us)", "(GB/s)", "(GB/s)");
  bool all_good = true;
  for (size_t i = 0; i < requests.size(); ++i) {
    const double bytes = parse_size(requests[i].size, "--sizes");
    const ChildOutcome& outcome = outcomes[i];
    const std::string head = fmt::format(" {:>12.0f} {:>12.0f} {:>9}", bytes, bytes / elem, dtype_name(dtype));
    if (outcome.exit_code != 0) {
      table += fmt::format("{}  failed: {}\n", head, outcome.output);
      all_good = false;
      continue;
    }
    const auto row = nlohmann::json::parse(outcome.output);
    const double time = row["time"].get<double>(), algbw = time > 0 ? bytes / time / 1e9 : 0;
    table += fmt::format("{} {:>11.2f} {:>8.2f} {:>8.2f}  {}\n", head, time * 1e6, algbw,
                         algbw * busbw_factor(collective, ranks), row["variant"].get<std::string>());
  }
  std::cout << table;
  return all_good ? 0 : 1;
}

}  // namespace collsim
