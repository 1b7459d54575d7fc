#include "run/run_scenario.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "algorithms/collective.hpp"
#include "run/metrics.hpp"
#include "sim/auto_choice.hpp"
#include "util/child_process.hpp"
#include "util/errors.hpp"

namespace collsim {

std::vector<AutoCandidate> auto_trials(const Scenario& scenario, const std::vector<std::string>& cfg) {
  if (scenario.collective.algorithm != "auto" || scenario.collective.auto_by != "simulate") return {};
  return simulate_candidates(scenario, cfg);
}

Baseline run_fault_free_twin(const Scenario& scenario, const std::vector<std::string>& cfg,
                             const std::vector<AutoCandidate>& trials) {
  Scenario twin = scenario;
  twin.faults.clear();
  twin.recovery.policy = RecoveryPolicy::none;
  const ChildOutcome outcome = run_in_child([&] {
    SimOptions options;
    options.cfg = cfg;
    options.auto_simulated = trials;
    options.kept_messages = 0;
    const SimResult result = run_simulation(twin, options);
    nlohmann::json out{{"simulated_time", result.simulated_time}, {"rounds", nlohmann::json::array()}};
    for (const auto& round : result.rounds) out["rounds"].push_back(round.end - round.start);
    return out.dump();
  });
  if (outcome.exit_code != 0) throw InputError(fmt::format("--baseline: the fault-free run failed: {}", outcome.output));
  const auto out = nlohmann::json::parse(outcome.output);
  Baseline baseline;
  baseline.simulated_time = out["simulated_time"].get<double>();
  for (const auto& duration : out["rounds"]) baseline.round_times.push_back(duration.get<double>());
  return baseline;
}

namespace {

// ZeRO-3 ends an iteration with each rank's shard of every bucket reduced (the parameters
// are gathered only when the next forward needs them): each bucket's slice is checked as a
// reduce-scatter, and the run fails if an all-gather delivered parameters other than their
// owners'.
Verification verify_sharded(const Scenario& scenario, const SimResult& result) {
  Verification merged;
  merged.checked_ranks = static_cast<int>(result.results.size());
  // Each rank's input, read once for every bucket (input_of may regenerate it); an input has
  // the shape of the rank's whole result.
  std::vector<Buffer> inputs;
  for (size_t rank = 0; rank < result.results.size(); ++rank) {
    const Buffer& whole = result.results[rank];
    inputs.emplace_back(whole.dtype(), whole.carried(), whole.size());
    result.input_of(static_cast<int>(rank), inputs.back());
  }
  for (const BucketSlice& slice : result.sharded_buckets) {
    std::vector<Buffer> results;
    for (const Buffer& whole : result.results) results.push_back(whole.slice(slice.offset, slice.map));
    const Verification one =
        verify_results(Collective::reduce_scatter, scenario.collective.op, 0, results,
                       [&](int rank, Buffer& buf) { buf = inputs[static_cast<size_t>(rank)].slice(slice.offset, slice.map); });
    merged.max_error = std::max(merged.max_error, one.max_error);
    merged.wrong_elements += one.wrong_elements;
    merged.tolerance = one.tolerance;
    if (!one.verified && merged.verified) {
      merged.verified = false;
      merged.failure = one.failure;
    }
  }
  if (!result.gather_failure.empty() && merged.verified) {
    merged.verified = false;
    merged.failure = result.gather_failure;
  }
  return merged;
}

}  // namespace

RunOutcome execute_run(const Scenario& scenario, const std::vector<std::string>& cfg,
                       const std::optional<Baseline>& twin, const std::vector<AutoCandidate>& trials,
                       uint64_t kept_messages) {
  SimOptions options;
  options.cfg = cfg;
  options.auto_simulated = trials;
  options.kept_messages = kept_messages;
  RunOutcome run{run_simulation(scenario, options), {}, {}};
  if (run.result.stall.empty() && !run.result.sharded_buckets.empty()) {
    run.verification = verify_sharded(scenario, run.result);
  } else if (run.result.stall.empty()) {
    const int root = root_in_group(scenario.collective.root, static_cast<int>(run.result.results.size()));
    run.verification =
        verify_results(scenario.collective.kind, scenario.collective.op, root, run.result.results, run.result.input_of);
  } else {
    run.verification.verified = false;
    run.verification.failure = "the run did not complete";
  }
  run.summary = summarize(scenario.collective.kind, run.result, run.verification, twin);
  return run;
}

nlohmann::json run_metrics(const Scenario& scenario) {
  const RunOutcome run = execute_run(scenario, {}, std::nullopt, auto_trials(scenario, {}), 0);
  nlohmann::json metrics = metric_values(run.summary, run.result);
  nlohmann::json rounds = nlohmann::json::array();
  for (const auto& r : run.result.rounds) rounds.push_back(r.end - r.start);
  metrics["round_times"] = rounds;
  metrics["tolerance"] = run.summary.verification.tolerance;
  return metrics;
}

}  // namespace collsim
