#pragma once
// --algorithm auto: which algorithm of the collective runs. By "model", every candidate's
// cost formula on this platform's alpha and B; by "simulate", a short simulation of every
// candidate (one round, no faults) on the scenario's own platform and network, each in its
// own process, which also sees contention and the realistic network the formulas ignore
// (the trials: run/run_scenario.hpp, simulate_candidates; the choice from them: here).
#include <functional>
#include <string>
#include <vector>

#include "plan/run_plan.hpp"

namespace collsim {

// One candidate by model: its schedule priced on in's network, with the bottleneck link of
// its slowest step, or why it is impractical here (then not priced). For a run, impractical
// to simulate (contention.hpp, impractical_reason); `model_only` (`collsim model`, nothing is
// simulated): beyond the model's own limits (model_limit_reason).
AutoCandidate model_candidate(const AlgorithmInfo& algorithm, const ModelInput& in, bool model_only = false);

// Every algorithm of the collective by model, best first (impractical ones last).
std::vector<AutoCandidate> rank_by_model(Collective collective, const ModelInput& in, bool model_only = false);

// Best first: by simulated time where simulated, else by model time; those skipped or whose
// simulation failed last (stable: ties keep their order).
void order_candidates(std::vector<AutoCandidate>& table);

// Chooses from `simulated` when it is not empty, from the cost formulas otherwise; fills
// plan.choice (the candidates, best first; by what; why the winner won) and a note saying why.
// `model_for` gives each candidate's cost model input (alpha and B of its partners' routes).
const AlgorithmInfo& choose_algorithm(Collective collective, const std::vector<AutoCandidate>& simulated,
                                      const std::function<ModelInput(const AlgorithmInfo&)>& model_for,
                                      RunPlan& plan);

}  // namespace collsim
