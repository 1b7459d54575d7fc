#pragma once
// A run from scenario to summary: the steps that `collsim run`, baselines and sweep points
// share. Each function that simulates makes the process's one SimGrid engine (or a
// child's, for the fault-free twin): call it once per process.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "run/summary.hpp"
#include "scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/verify.hpp"
#include "util/child_process.hpp"

namespace collsim {

struct RunOutcome {
  SimResult result;
  Verification verification;
  RunSummary summary;
};

// --algorithm auto --auto simulate: the trials of every candidate, each in a child process,
// run before this process makes its engine (empty otherwise: auto then goes by the model).
std::vector<AutoCandidate> auto_trials(const Scenario& scenario, const std::vector<std::string>& cfg);

// Simulates every algorithm of the scenario's collective (one round, no faults), each in a
// child process; call before this process creates its engine. The table comes back in
// registry order.
std::vector<AutoCandidate> simulate_candidates(const Scenario& scenario, const std::vector<std::string>& cfg);

// What a trial's process said, as a candidate: its times (exit 0), or why it is ruled out
// (exit 2 with a message: the trial threw, run_in_child's convention; usually an InputError,
// the algorithm refusing this input, but any exception of the run is read the same way).
// Throws std::runtime_error when the trial died without a message (a crash, a kill, any
// other exit status: choosing without it would be wrong), and InputError with the message
// when the `first` candidate threw (that error is the scenario's, which the real run reports).
AutoCandidate judge_trial(const std::string& name, const ChildOutcome& outcome, bool first);

// The same scenario without faults, run in a child process (run --baseline).
Baseline run_fault_free_twin(const Scenario& scenario, const std::vector<std::string>& cfg,
                             const std::vector<AutoCandidate>& trials);

// Simulates, verifies every rank's result and summarizes; keeps the first `kept_messages`
// single messages for a trace and its pictures.
RunOutcome execute_run(const Scenario& scenario, const std::vector<std::string>& cfg,
                       const std::optional<Baseline>& twin, const std::vector<AutoCandidate>& trials,
                       uint64_t kept_messages);

// Runs a scenario and returns every metric (run/metrics.hpp), the round times and the
// verification's tolerance (in words), for baselines, sweep tables and the size table.
nlohmann::json run_metrics(const Scenario& scenario);

// The variant that ran, in one word (a --sizes row's last column, a CSV cell): its name, NCCL's
// protocol and channels ("nccl-tree/LL128/16ch"), or its channels when more than one ("ring/8ch").
std::string variant_that_ran(const AlgorithmChoice& choice);

}  // namespace collsim
