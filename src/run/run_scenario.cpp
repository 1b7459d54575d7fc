#include "run/run_scenario.hpp"
#include "run/async_verify.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "algorithms/collective.hpp"
#include "run/metrics.hpp"
#include "run/nccl_auto.hpp"
#include "util/child_process.hpp"
#include "util/errors.hpp"

namespace collsim {

std::vector<AutoCandidate> auto_trials(const Scenario& scenario, const std::vector<std::string>& cfg) {
  if (scenario.collective.algorithm != "auto" || scenario.collective.auto_by != "simulate") return {};
  return simulate_candidates(scenario, cfg);
}

std::vector<AutoCandidate> simulate_candidates(const Scenario& scenario, const std::vector<std::string>& cfg) {
  std::vector<AutoCandidate> table;
  for (const std::string& name : classic_algorithm_names(scenario.collective.kind)) {
    // The collective alone: one round, nothing injected, nobody recovering.
    Scenario trial = scenario;
    trial.collective.algorithm = name;
    trial.training.rounds = 1;
    trial.faults.clear();
    trial.recovery.policy = RecoveryPolicy::none;
    const ChildOutcome outcome = run_in_child([&] {
      PlanOptions options;
      options.cfg = cfg;
      options.topology_bound = false;  // the trial's time is all it reports
      options.kept_messages = 0;
      const SimResult result = run_simulation(trial, options);
      if (result.rounds.empty()) throw std::runtime_error("the collective did not complete");
      const RoundRecord& round = result.rounds.front();
      return nlohmann::json{{"model", model_time(result.plan->algorithm(), result.plan->model)},
                            {"simulated", round.end - round.collective_start}}
          .dump();
    });
    table.push_back(judge_trial(name, outcome, name == classic_algorithm_names(scenario.collective.kind).front()));
  }
  return table;
}

AutoCandidate judge_trial(const std::string& name, const ChildOutcome& outcome, bool first) {
  AutoCandidate candidate(name);
  if (outcome.exit_code == 0) {
    const auto out = nlohmann::json::parse(outcome.output);
    candidate.model_time = out["model"].get<double>();
    candidate.simulated_time = out["simulated"].get<double>();
  } else if (outcome.exit_code != 2 || outcome.output.empty()) {
    // A trial that crashed or was killed (no exception, no message): its table would be
    // wrong, so the run fails rather than choose without it.
    throw std::runtime_error(fmt::format("auto: the trial of {} died (exit status {}){}", name, outcome.exit_code,
                                         outcome.output.empty() ? "" : ": " + outcome.output));
  } else {
    // The trial threw (run_in_child: exit 2 and the message), most often an InputError
    // refusing this algorithm here, but any error the run raised counts the same. The
    // first candidate's error is the scenario's (the real run will report it); another's
    // is this candidate's and only rules it out.
    candidate.error = outcome.output;
    if (first) throw InputError(candidate.error);
  }
  return candidate;
}

Baseline run_fault_free_twin(const Scenario& scenario, const std::vector<std::string>& cfg,
                             const std::vector<AutoCandidate>& trials) {
  Scenario twin = scenario;
  twin.faults.clear();
  twin.recovery.policy = RecoveryPolicy::none;
  const ChildOutcome outcome = run_in_child([&] {
    PlanOptions options;
    options.cfg = cfg;
    options.auto_simulated = trials;
    options.auto_nccl = pick_nccl_for_auto(twin, cfg, trials);
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
  for (const BucketSlice& slice : result.plan->training.sharded_buckets()) {
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
  if (scenario.parallelism.given)
    throw InputError("parallelism: a parallel run is one step of its collectives; run it with `collsim run` alone "
                     "(not in a sweep, a baseline or a size table yet)");
  PlanOptions options;
  options.cfg = cfg;
  options.auto_simulated = trials;
  options.auto_nccl = pick_nccl_for_auto(scenario, cfg, trials);
  options.kept_messages = kept_messages;
  RunOutcome run{run_simulation(scenario, options), {}, {}};
  if (run.result.stall.empty() && run.result.plan->model.deployment.asynchronous) {
    run.verification = verify_async(run.result);
  } else if (run.result.stall.empty() && run.result.verified_in_flight) {
    run.verification = *run.result.verified_in_flight;  // each bucket as it ended (sim/bucket_data.hpp)
  } else if (run.result.stall.empty() && !run.result.plan->training.sharded_buckets().empty()) {
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

std::string variant_that_ran(const AlgorithmChoice& choice) {
  std::string label = choice.algorithm->name;
  const nlohmann::json& parameters = choice.parameters;
  if (parameters.contains("nccl"))
    return fmt::format("{}/{}/{}ch", label, parameters["nccl"]["proto"].get<std::string>(),
                       parameters["nccl"]["channels"].get<int>());
  if (parameters.contains("channels") && parameters["channels"].get<int>() > 1)
    label += fmt::format("/{}ch", parameters["channels"].get<int>());
  return label;
}

nlohmann::json run_metrics(const Scenario& scenario) {
  const RunOutcome run = execute_run(scenario, {}, std::nullopt, auto_trials(scenario, {}), 0);
  nlohmann::json metrics = metric_values(run.summary, run.result);
  nlohmann::json rounds = nlohmann::json::array();
  for (const auto& r : run.result.rounds) rounds.push_back(r.end - r.start);
  metrics["round_times"] = rounds;
  metrics["tolerance"] = run.summary.verification.tolerance;
  metrics["algorithm"] = variant_that_ran(run.result.plan->choice);  // the one that ran (auto's choice)
  return metrics;
}

}  // namespace collsim
