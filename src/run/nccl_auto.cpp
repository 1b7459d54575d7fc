#include "run/nccl_auto.hpp"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/contention.hpp"
#include "model/generated_network.hpp"
#include "plan/planner.hpp"
#include "platform/generator_spec.hpp"
#include "util/child_process.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace collsim {

namespace {

// The variant's plan made in this (child) process: "SECONDS CHANNELS".
// `generated`: the platform already made, shared by the variants priced in this process.
std::string price(Scenario scenario, nccl::Algo algo, nccl::Proto proto, bool model_only,
                  std::shared_ptr<const GeneratedPlatform> generated = nullptr) {
  scenario.collective.algorithm = nccl::registry_name(algo);
  scenario.nccl.proto = proto;
  SimGridGuard guard;
  PlanOptions options;
  options.model_only = model_only;
  options.generated = std::move(generated);
  options.topology_bound = false;
  const RunPlan plan = plan_run(scenario, options, guard);
  // within the model's own limits, as every other algorithm: NCCL's Ring at p = 131,072
  // would describe its whole pipeline (the child grew past 20 GiB)
  std::string beyond;
  const std::optional<Schedule> schedule = schedule_within_model_limits(*plan.choice.algorithm, plan.model, beyond);
  if (schedule && beyond.empty()) beyond = model_limit_reason(*schedule);
  if (!beyond.empty()) throw InputError("collective.algorithm: " + beyond);
  const double time = estimate_schedule(*schedule, plan.model).time;
  return fmt::format("{:.17g} {}", time, plan.choice.parameters["nccl"]["channels"].get<int>());
}

// The variant priced in this process, its outcome as a child's would be (an exception: exit
// code 2 and its message).
ChildOutcome price_here(const Scenario& scenario, nccl::Algo algo, nccl::Proto proto,
                        const std::shared_ptr<const GeneratedPlatform>& generated) {
  try {
    return {0, price(scenario, algo, proto, true, generated)};
  } catch (const std::exception& error) {
    return {2, error.what()};
  }
}

// The generated platform NCCL's variants are priced on under `collsim model` (PXN routes,
// NCCL's latencies in its transport: the same for every variant), made once; nullptr when
// its routes come from SimGrid's platform (each variant then builds it in a child).
std::shared_ptr<const GeneratedPlatform> structure_for_nccl(Scenario scenario) {
  scenario.collective.algorithm = nccl::registry_name(nccl::Algo::ring);
  try {
    return model_structure(scenario);
  } catch (const InputError&) {
    return nullptr;  // each variant says why in its own words
  }
}

// "collective.algorithm: NCCL's ... " without its field: the reason alone.
std::string reason_of(const std::string& error) {
  const auto colon = error.find(": ");
  return colon == std::string::npos ? error : error.substr(colon + 2);
}

// collsim's own best: the fastest trial by simulation, else the model's choice in a child's plan.
std::optional<AutoCandidate> best_of_collsims(const Scenario& scenario, const std::vector<std::string>& cfg,
                                              const std::vector<AutoCandidate>& trials) {
  if (!trials.empty()) {
    const auto best = std::min_element(trials.begin(), trials.end(), [](const auto& a, const auto& b) {
      return a.simulated_time.value_or(std::numeric_limits<double>::infinity()) <
             b.simulated_time.value_or(std::numeric_limits<double>::infinity());
    });
    if (!best->simulated_time) return std::nullopt;
    return *best;
  }
  const ChildOutcome outcome = run_in_child([&] {
    SimGridGuard guard;
    PlanOptions options;
    options.cfg = cfg;
    options.topology_bound = false;
    const RunPlan plan = plan_run(scenario, options, guard);
    const AutoCandidate& first = plan.choice.candidates.front();
    return nlohmann::json{{"algorithm", first.algorithm}, {"channels", first.channels}, {"time", first.model_time}}.dump();
  });
  if (outcome.exit_code != 0) return std::nullopt;
  const auto out = nlohmann::json::parse(outcome.output);
  AutoCandidate best(out["algorithm"].get<std::string>());
  best.channels = out["channels"].get<int>();
  best.model_time = out["time"].get<double>();
  return best;
}

std::string label_of(const NcclVariant& v) {
  return fmt::format("{}/{}", nccl::registry_name(v.algo), nccl::proto_name(v.proto));
}

}  // namespace

std::vector<NcclVariant> price_nccl_variants(const Scenario& scenario, bool model_only) {
  if (scenario.collective.kind != Collective::allreduce) return {};
  // a generated platform of another family than rail (and its GPU presets) has no GPUs: no
  // child needs to build it to find that out (12 s of CPU for a fat tree at p = 131,072)
  const auto generator = parse_generator(scenario.topology, "topology");
  if (generator && !std::holds_alternative<RailSpec>(*generator)) return {};
  // `collsim model` on a generated platform builds no engine: every variant is priced in this
  // process on one platform, each route computed once for all of them (a child of its own
  // for each computed them all again: half of the time at p = 131,072)
  const std::shared_ptr<const GeneratedPlatform> shared = model_only ? structure_for_nccl(scenario) : nullptr;
  std::vector<NcclVariant> variants;
  for (const nccl::Algo algo : nccl::all_algos())
    for (const nccl::Proto proto : nccl::all_protos()) {
      if (nccl::reduces_in_switch(algo) && proto != nccl::Proto::simple) continue;  // NCCL runs them with Simple only
      NcclVariant v;
      v.algo = algo;
      v.proto = proto;
      const ChildOutcome outcome = shared ? price_here(scenario, algo, proto, shared)
                                          : run_in_child([&] { return price(scenario, algo, proto, model_only); });
      if (outcome.exit_code == 0) std::sscanf(outcome.output.c_str(), "%lf %d", &v.time, &v.channels);
      else if (outcome.exit_code > 128) v.why_not = fmt::format("its pricing died of signal {}", outcome.exit_code - 128);
      else v.why_not = reason_of(outcome.output);
      // no GPUs: no NCCL at all
      if (v.why_not.find("run on GPUs") != std::string::npos) return {};
      variants.push_back(v);
    }
  std::stable_sort(variants.begin(), variants.end(), [](const NcclVariant& a, const NcclVariant& b) { return a.time < b.time; });
  return variants;
}

std::optional<AutoNcclPick> pick_nccl_for_auto(const Scenario& scenario, const std::vector<std::string>& cfg,
                                               const std::vector<AutoCandidate>& trials) {
  if (scenario.collective.algorithm != "auto") return std::nullopt;
  const std::vector<NcclVariant> variants = price_nccl_variants(scenario, false);
  if (variants.empty() || !variants.front().why_not.empty()) return std::nullopt;
  const NcclVariant& best = variants.front();
  const std::optional<AutoCandidate> own = best_of_collsims(scenario, cfg, trials);
  const double own_time = !own ? std::numeric_limits<double>::infinity()
                          : own->simulated_time ? *own->simulated_time : own->model_time;
  AutoNcclPick pick;
  pick.algorithm = nccl::registry_name(best.algo);
  pick.proto = best.proto;
  pick.by = trials.empty() ? "model" : "simulate";
  pick.chosen = best.time < own_time;
  const std::string own_label = own ? own->label() : "none of collsim's algorithms";
  const std::string nccls = fmt::format("{} ({}/{}, {} ch: {})", label_of(best), nccl::algo_name(best.algo),
                                        nccl::proto_name(best.proto), best.channels, format_time(best.time));
  const std::string ratio = own ? fmt::format("{:.3g}x", std::max(best.time, own_time) / std::min(best.time, own_time)) : "";
  pick.reason = pick.chosen
                    ? fmt::format("auto chose NCCL's {} by its model on NCCL's platform (PXN, NCCL's transport), {} "
                                  "faster than collsim's best, {} ({})",
                                  nccls, ratio.empty() ? "infinitely" : ratio, own_label,
                                  own ? format_time(own_time) : "none completes")
                    : fmt::format("auto kept collsim's {}: NCCL's fastest variant, {}, is {} slower", own_label, nccls, ratio);
  for (const NcclVariant& v : variants) {
    AutoCandidate row(label_of(v));
    if (v.channels > 1) row.channels = v.channels;
    if (v.why_not.empty()) row.model_time = v.time;
    else row.skipped = v.why_not;
    pick.variants.push_back(row);
  }
  pick.own = own;
  return pick;
}

}  // namespace collsim
