// `collsim model`: the cost model without simulating. On the alpha-beta star of --bandwidth
// and --latency (command_model), or with --topology T on a platform's own routes: the platform
// is built in an engine, the ranks placed as a run would place them, and each algorithm's
// schedule priced on the routes between them (model/contention.hpp).
#include <algorithm>
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>

#include "algorithms/algorithms.hpp"
#include "algorithms/hierarchy.hpp"
#include "algorithms/registry.hpp"
#include "plan/model_plan.hpp"
#include "scenario/settings_read.hpp"
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

// The scenario a run with the same flags would simulate (its fields validated as a run's).
Scenario scenario_of(const ModelRequest& request) {
  if (!request.bandwidth.empty() || !request.latency.empty() || !request.inter_bandwidth.empty() ||
      !request.inter_latency.empty() || request.inter_flows != 1)
    throw InputError("--topology: the platform gives the routes; --bandwidth, --latency and --inter-* describe a "
                     "platform without one: give either");
  nlohmann::json document{{"topology", request.topology},
                          {"network", request.network},
                          {"message_overhead", request.overhead},
                          {"collective",
                           {{"kind", request.collective},
                            {"algorithm", request.algorithm == "all" || request.algorithm.empty() ? "auto" : request.algorithm},
                            {"size", request.size},
                            {"dtype", request.dtype},
                            {"segment", request.segment},
                            {"servers", request.servers}}}};
  if (request.workers > 0) document["workers"] = request.workers;  // else every host, as a run's default
  if (request.group_size) document["collective"]["group_size"] = *request.group_size;
  if (request.channels != 1) document["collective"]["channels"] = request.channels;
  if (request.intra != "ring") document["collective"]["intra"] = request.intra;
  if (request.inter != "ring") document["collective"]["inter"] = request.inter;
  if (!request.reduce_bandwidth.empty()) document["collective"]["reduce_bandwidth"] = request.reduce_bandwidth;
  return parse_scenario(document, "");
}

namespace {

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

// plan_run, its errors about hierarchical's levels naming the flags (--intra, --inter) that set them.
RunPlan plan_levels(const Scenario& scenario, const PlanOptions& options, SimGridGuard& guard) {
  try {
    return plan_run(scenario, options, guard);
  } catch (const InputError& error) {
    const std::string message = error.what();
    for (const char* level : {"intra", "inter"})
      if (message.starts_with(fmt::format("collective.{}:", level)))
        throw InputError(fmt::format("--{}{}", level, message.substr(std::string_view("collective.").size() + 5)));
    throw;
  }
}

int command_model_on_platform(const ModelRequest& request) {
  if (request.size.empty()) throw InputError("model: --size is required");
  const Scenario scenario = scenario_of(request);
  // NCCL's variants first: each plans its own platform in a child, before this process's engine
  const std::string nccl_ranking = request.algorithm == "all" ? rank_nccl_variants(scenario) : "";
  SimGridGuard guard;
  PlanOptions options;
  options.model_only = true;  // nothing runs: the run limits do not apply
  const RunPlan plan = plan_levels(scenario, options, guard);  // the platform, the placement, the model's input: no run
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

namespace {

// --intra and --inter as collective.intra and inter: a name of hierarchy_level_names, no
// tree inside the groups, no nvls (no platform here), one channel with a level other than ring.
void read_levels(const ModelRequest& request, CollectiveSpec& spec) {
  spec.intra = parse_intra_level(request.intra, "--intra");
  if (spec.intra == HierarchyLevel::nvls)
    throw InputError("--intra: nvls reduces in a platform's NVSwitch, which the formulas do not describe; run it with "
                     "`collsim run --topology dgx-h100:N --algorithm hierarchical --set collective.intra=nvls`");
  spec.inter = parse_inter_level(request.inter, "--inter");
  if ((spec.intra != HierarchyLevel::ring || spec.inter != HierarchyLevel::ring) && request.channels > 1)
    throw InputError("--channels: channels cut the vector over rings; with --intra or --inter other than ring use 1");
}

// The parameters of the parameter-server and hierarchical formulas: servers, groups (blocks
// of --group-size ranks) and the costs inside and between them.
void read_model_parameters(const ModelRequest& request, ModelInput& in) {
  if (request.servers < 1 || request.servers > in.p)
    throw InputError(fmt::format("--servers: {} is out of range; allowed: 1 to {}", request.servers, in.p));
  in.servers = request.servers;
  in.group_sizes = block_sizes(in.p, request.group_size.value_or(in.p));
  in.channels = request.channels;
  if (!request.reduce_bandwidth.empty()) in.reduce_bandwidth = parse_bandwidth(request.reduce_bandwidth, "--reduce-bandwidth");
  CollectiveSpec levels;
  read_levels(request, levels);
  in.intra_level = levels.intra;
  in.inter_level = levels.inter;
  in.intra = SharedRoutes{in.alpha, in.bandwidth, 1};
  in.inter = SharedRoutes{
      request.inter_latency.empty() ? in.alpha : parse_time(request.inter_latency, "--inter-latency"),
      request.inter_bandwidth.empty() ? in.bandwidth : parse_bandwidth(request.inter_bandwidth, "--inter-bandwidth"),
      request.inter_flows};
  check_levels(in, "--intra", "--inter");
}

// Rows for those parameters, aligned with format_model's table (its widest label is
// "lower bound"); none for the other algorithms.
std::string describe_model_parameters(const AlgorithmInfo& algorithm, const ModelRequest& request, const ModelInput& in) {
  std::vector<std::pair<std::string, std::string>> rows;
  if (algorithm.run == allreduce_parameter_server)
    rows.emplace_back("servers", fmt::format("{} (ranks 0 to {}), shards of {}", in.servers, in.servers - 1,
                                             format_size(in.bytes(in.elems) / in.servers)));
  if (algorithm.run == allreduce_hierarchical) {
    const auto& sizes = in.group_sizes;
    if (sizes.size() == 1) {
      rows.emplace_back("groups", fmt::format("one group of {} ranks: the ring's messages", in.p));
    } else {
      const std::string last = sizes.back() == sizes.front()
                                   ? ""
                                   : fmt::format(", the last of {}: unequal groups, the model is an estimate", sizes.back());
      rows.emplace_back("groups", fmt::format("{} groups of {} ranks{} (--group-size {})", sizes.size(), sizes.front(),
                                              last, *request.group_size));
      const std::string shared = in.inter->sharing > 1 ? fmt::format(" shared by {} messages", in.inter->sharing) : "";
      rows.emplace_back("between", fmt::format("alpha {}, B {}{}", format_time(in.inter->alpha),
                                               format_bandwidth(in.inter->bandwidth), shared));
    }
  }
  std::string out;
  for (const auto& [label, value] : rows) out += fmt::format("  {:<{}}  {}\n", label, std::string_view("lower bound").size(), value);
  return out;
}

}  // namespace

// A flag the algorithm does not read would change nothing: refused, as a scenario's
// setting is (scenario/settings_read.hpp).
void check_flags_read(const ModelRequest& request, Collective collective, const AlgorithmInfo& algorithm) {
  CollectiveSpec spec;
  spec.kind = collective;
  spec.algorithm = algorithm.name;
  spec.segment = parse_size(request.segment, "--segment");
  spec.servers = request.servers;
  spec.group_size = request.group_size;
  spec.channels = request.channels;
  read_levels(request, spec);
  for (const UnreadSetting& unread : settings_not_read(spec, algorithm)) {
    std::string flag = "--" + unread.key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    throw InputError(fmt::format("{}: {} {} does not read it (read by: {}); leave it out", flag, algorithm.name,
                                 collective_name(collective), unread.read_by));
  }
}

namespace {
int print_model(Collective collective, const AlgorithmInfo& algorithm, bool all, const ModelRequest& request,
                const ModelInput& in);
}  // namespace

ModelEstimate estimate_within_model_limits(const AlgorithmInfo& algorithm, const ModelInput& in) {
  std::string beyond;
  const std::optional<Schedule> schedule = schedule_within_model_limits(algorithm, in, beyond);
  if (schedule && beyond.empty()) beyond = model_limit_reason(*schedule);
  if (!beyond.empty()) throw InputError(fmt::format("--algorithm: {} on {} ranks: {}", algorithm.name, in.p, beyond));
  return estimate_schedule(*schedule, in);
}

ModelInput formula_input(const ModelRequest& request) {
  if (request.workers == 0)
    throw InputError("--workers: required without --topology (with a platform, every host is a rank by default)");
  if (request.workers < 1 || request.workers > max_workers)
    throw InputError(fmt::format("--workers: {} is out of range; allowed: 1 to {}", request.workers, max_workers));
  if (request.size.empty()) throw InputError("model: --size is required");
  if (request.bandwidth.empty()) throw InputError("model: --bandwidth is required without --topology");
  if (request.latency.empty()) throw InputError("model: --latency is required without --topology");
  if (request.network != "ideal")
    throw InputError("--network: only with --topology (without one the model is the alpha-beta star, ideal by definition)");
  const Dtype dtype = parse_dtype(request.dtype, "--dtype");
  ModelInput in;
  in.p = request.workers;
  const double bytes = parse_size(request.size, "--size");
  if (bytes <= 0) throw InputError("--size: must be > 0 bytes");
  in.bytes_per_elem = static_cast<double>(dtype_size(dtype));
  in.elems = static_cast<size_t>(bytes / in.bytes_per_elem);
  if (static_cast<double>(in.elems) * in.bytes_per_elem != bytes)
    throw InputError(fmt::format("--size: {} bytes is not a whole number of {} elements", bytes, dtype_name(dtype)));
  in.bandwidth = parse_bandwidth(request.bandwidth, "--bandwidth");
  in.alpha = parse_time(request.latency, "--latency");
  const double segment = parse_size(request.segment, "--segment");
  if (segment <= 0) throw InputError("--segment: must be > 0 bytes");
  in.segment_elems = std::max<size_t>(1, static_cast<size_t>(std::llround(segment / in.bytes_per_elem)));
  in.overhead = parse_time(request.overhead, "--overhead");
  if (in.overhead < 0) throw InputError("--overhead: must be a time >= 0, e.g. 1us");
  read_model_parameters(request, in);
  return in;
}

int command_model(const ModelRequest& request) {
  const Collective collective = parse_collective(request.collective, "--collective");
  const bool all = request.algorithm == "all";
  const std::string name = request.algorithm.empty() || all ? default_algorithm(collective) : request.algorithm;
  if (!request.sizes.empty()) return command_model_sizes(request);
  const AlgorithmInfo& algorithm = find_algorithm(collective, name, "--algorithm");
  if (!all) check_flags_read(request, collective, algorithm);
  CollectiveSpec levels;
  read_levels(request, levels);  // --intra and --inter, named as the flags, with or without a platform
  if (!request.topology.empty()) return command_model_on_platform(request);
  return print_model(collective, algorithm, all, request, formula_input(request));
}

namespace {

// The model's figures, or with all every algorithm ranked.
int print_model(Collective collective, const AlgorithmInfo& algorithm, bool all, const ModelRequest& request,
                const ModelInput& in) {
  if (all) {
    const std::string ranking = format_ranking(rank_by_model(collective, in, true));  // priced before anything is printed
    std::cout << fmt::format("  {} of {} on {} ranks, alpha {}, B {} (contention-free star), ranked by the model:\n",
                             collective_name(collective), format_size(in.bytes(in.elems)), in.p, format_time(in.alpha),
                             format_bandwidth(in.bandwidth))
              << ranking;
    return 0;
  }
  const ModelEstimate estimate = estimate_within_model_limits(algorithm, in);
  const std::string figures = format_model(collective, algorithm, in, {}, &estimate);
  std::cout << figures << describe_model_parameters(algorithm, request, in);
  return 0;
}

}  // namespace

}  // namespace collsim
