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

namespace collsim {

struct RunOutcome {
  SimResult result;
  Verification verification;
  RunSummary summary;
};

// --algorithm auto --auto simulate: the trials of every candidate, each in a child process,
// run before this process makes its engine (empty otherwise: auto then goes by the model).
std::vector<AutoCandidate> auto_trials(const Scenario& scenario, const std::vector<std::string>& cfg);

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

}  // namespace collsim
