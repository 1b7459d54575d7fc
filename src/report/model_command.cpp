// `collsim model --topology T`: the cost model on a platform's own routes, without
// simulating: the platform is built in an engine, the ranks placed as a run would place
// them, and each algorithm's schedule priced on the routes between them (model/contention.hpp).
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>

#include "model/contention.hpp"
#include "model/cut_bound.hpp"
#include "report/commands.hpp"
#include "report/nccl_variants.hpp"
#include "run/summary.hpp"
#include "scenario/scenario.hpp"
#include "plan/auto_choice.hpp"
#include "plan/planner.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"


namespace collsim {

namespace {

// The scenario a run with the same flags would simulate (its fields validated as a run's).
Scenario scenario_of(const ModelRequest& request) {
  if (!request.bandwidth.empty() || !request.latency.empty() || !request.inter_bandwidth.empty() ||
      !request.inter_latency.empty() || request.inter_flows != 1)
    throw InputError("--topology: the platform gives the routes; --bandwidth, --latency and --inter-* describe a "
                     "platform without one: give either");
  nlohmann::json document{{"topology", request.topology},
                          {"workers", request.workers},
                          {"network", request.network},
                          {"message_overhead", request.overhead},
                          {"collective",
                           {{"kind", request.collective},
                            {"algorithm", request.algorithm == "all" || request.algorithm.empty() ? "auto" : request.algorithm},
                            {"size", request.size},
                            {"dtype", request.dtype},
                            {"segment", request.segment},
                            {"servers", request.servers}}}};
  if (request.group_size) document["collective"]["group_size"] = *request.group_size;
  if (request.channels != 1) document["collective"]["channels"] = request.channels;
  if (!request.reduce_bandwidth.empty()) document["collective"]["reduce_bandwidth"] = request.reduce_bandwidth;
  return parse_scenario(document, "");
}

// What the model cannot see on this network (`estimate` unset: every algorithm at once).
std::string exactness(const Scenario& scenario, const ModelEstimate* estimate) {
  if (scenario.network == NetworkModel::realistic) return "an estimate: " + realistic_network_caveat();
  if (estimate != nullptr && !estimate->estimate_note.empty()) return "an estimate: " + estimate->estimate_note;
  const std::string followed = "every message followed rank by rank (a rank's next step starts when its own messages "
                               "are done and, with reduce_bandwidth, what it received is reduced), links shared as "
                               "SimGrid shares them on these routes";
  if (estimate != nullptr && estimate->rank_by_rank) return "exact on the ideal network: " + followed;
  const std::string lock_step = "steps priced in lock step with SimGrid's own max-min sharing on these routes: an "
                                "estimate where the messages of one step are uneven and the next step starts early";
  if (estimate != nullptr) return "exact for this step-synchronous schedule on the ideal network; " + lock_step;
  return "on the ideal network, pipelined and hierarchical schedules: " + followed + "; the others: " + lock_step;
}

// The topology bound after the lower bound, saying which one is tighter: the platform's
// tightest cut may take less time than the ranks' own links need, and then the lower bound holds.
std::string topology_bound_row(const CutBound& cut, double lower_bound) {
  if (cut.time > lower_bound)
    return fmt::format("{} (tighter than the lower bound: the cut {} must carry {} across {})", format_time(cut.time),
                       cut.cut, format_size(cut.bytes), format_bandwidth(cut.capacity));
  if (cut.time > 0)
    return fmt::format("{} = the lower bound, the tighter: the platform's tightest cut, {} ({} across {}), takes only {}",
                       format_time(lower_bound), cut.cut, format_size(cut.bytes), format_bandwidth(cut.capacity),
                       format_time(cut.time));
  return fmt::format("{} = the lower bound (no cut of the platform is tighter)", format_time(lower_bound));
}

// Where the routes come from when not from the generator's structure (empty otherwise).
std::string routes_row(const RunPlan& plan) {
  if (plan.model_routes.empty()) return "";
  return "read pair by pair from the platform built in SimGrid (" + plan.model_routes +
         "); computed from the generator's structure, without building the platform, only for star, rack, nodes, "
         "leaf-spine, rail, the GPU presets and fat-tree (faster at large p)";
}

}  // namespace

int command_model_on_platform(const ModelRequest& request) {
  if (request.workers < 1) throw InputError(fmt::format("--workers: {} must be >= 1", request.workers));
  if (request.size.empty()) throw InputError("model: --size is required");
  const Scenario scenario = scenario_of(request);
  // NCCL's variants first: each plans its own platform in a child, before this process's engine
  const std::string nccl_ranking = request.algorithm == "all" ? rank_nccl_variants(scenario) : "";
  SimGridGuard guard;
  PlanOptions options;
  options.model_only = true;  // nothing runs: the run limits do not apply
  const RunPlan plan = plan_run(scenario, options, guard);  // the platform, the placement, the model's input: no run
  const Collective collective = scenario.collective.kind;
  const CutBound& cut = plan.topology_bound;
  const std::string cut_row = topology_bound_row(cut, lower_bound(collective, plan.model).value());
  // the cuts left out for their size, named (model/cut_bound.hpp, max_cut_routes)
  const std::string cut_text = cut.unread.empty() ? cut_row : cut_row + "; " + cut.unread;
  if (request.algorithm == "all") {
    std::cout << fmt::format("  {} of {} on {} ranks of {} ({} network), ranked by the model:\n",
                             collective_name(collective), format_size(plan.model.bytes(plan.model.elems)),
                             plan.workers, plan.platform.source, network_model_name(scenario.network));
    std::cout << format_ranking(plan.choice.candidates) << nccl_ranking;
    std::cout << fmt::format("  lower bound     {}\n  topology bound  {}\n  the model is   {}\n",
                             format_time(lower_bound(collective, plan.model).value()), cut_text,
                             exactness(scenario, nullptr));
    if (!plan.model_routes.empty()) std::cout << fmt::format("  routes          {}\n", routes_row(plan));
    return 0;
  }
  const ModelEstimate estimate = estimate_within_model_limits(*plan.choice.algorithm, plan.model);
  std::vector<std::pair<std::string, std::string>> rows{
      {"topology", fmt::format("{} ({} ranks)", plan.platform.source, plan.workers)},
      {"network", std::string(network_model_name(scenario.network))},
      {"topology bound", cut_text},
      {"exact?", exactness(scenario, &estimate)}};
  if (!plan.model_routes.empty()) rows.emplace_back("routes", routes_row(plan));
  std::cout << format_model(collective, *plan.choice.algorithm, plan.model, rows, &estimate);
  return 0;
}

}  // namespace collsim
