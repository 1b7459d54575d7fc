#pragma once
// --algorithm auto: which algorithm of the collective runs. By "model", every candidate's
// cost formula on this platform's alpha and B; by "simulate", a short simulation of every
// candidate (one round, no faults) on the scenario's own platform and network, each in its
// own process, which also sees contention and the realistic network the formulas ignore.
#include <functional>
#include <string>
#include <vector>

#include "sim/simulation.hpp"
#include "util/child_process.hpp"

namespace collsim {

// Simulates every algorithm of the scenario's collective; call before this process
// creates its engine. The table comes back in registry order.
std::vector<AutoCandidate> simulate_candidates(const Scenario& scenario, const std::vector<std::string>& cfg);

// What a trial's process said, as a candidate: its times (exit 0), or why it is ruled out
// (exit 2 with a message: the trial threw, run_in_child's convention; usually an InputError,
// the algorithm refusing this input, but any exception of the run is read the same way).
// Throws std::runtime_error when the trial died without a message (a crash, a kill, any
// other exit status: choosing without it would be wrong), and InputError with the message
// when the `first` candidate threw (that error is the scenario's, which the real run reports).
AutoCandidate judge_trial(const std::string& name, const ChildOutcome& outcome, bool first);

// One candidate by model: its schedule priced on in's network, with the bottleneck link of
// its slowest step, or why it is impractical here (then not priced).
AutoCandidate model_candidate(const AlgorithmInfo& algorithm, const ModelInput& in);

// Every algorithm of the collective by model, best first (impractical ones last).
std::vector<AutoCandidate> rank_by_model(Collective collective, const ModelInput& in);

// Chooses from `simulated` when it is not empty, from the cost formulas otherwise; fills
// result.auto_candidates (best first) and a note saying why the winner won.
// `model_for` gives each candidate's cost model input (alpha and B of its partners' routes).
const AlgorithmInfo& choose_algorithm(Collective collective, const std::vector<AutoCandidate>& simulated,
                                      const std::function<ModelInput(const AlgorithmInfo&)>& model_for,
                                      SimResult& result);

}  // namespace collsim
