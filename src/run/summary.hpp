#pragma once
// The figures a run reports, computed once for the printed table and the trace.
#include <optional>
#include <string>
#include <vector>

#include "model/cost_model.hpp"
#include "sim/simulation.hpp"
#include "sim/verify.hpp"

namespace collsim {

// The same scenario without faults (run --baseline).
struct Baseline {
  double simulated_time = 0;
  std::vector<double> round_times;
};

// Training iterations with layers (or a batch): means over the completed rounds.
struct IterationFigures {
  double iteration_time = 0;  // a round, start to end
  double compute_time = 0;    // forward and backward, on the slowest rank
  double comm_time = 0;       // the collectives added up (with buckets, they overlap backward)
  double exposed_comm = 0;    // iteration_time - compute_time: communication not hidden
  double overlap_fraction = 0;  // (comm_time - exposed_comm) / comm_time
  std::optional<double> samples_per_second;  // training.batch x the group's workers / iteration
  std::optional<double> memory_per_worker;   // with layers: bytes of parameters, gradients, optimizer states
  int buckets = 1;
  double iteration_p50 = 0, iteration_p99 = 0;  // over the rounds (nearest rank): the tail
  // T1 x p / Tp: one worker alone does its batch in T1 (its compute at nominal speed, times
  // the compute noise's mean, nothing to communicate); p workers do p batches in one
  // iteration, Tp. So T1 / iteration_time. Absent when the compute is work in flops.
  std::optional<double> scaling_efficiency;
  double single_worker_time = 0;  // T1
};

struct RunSummary {
  double simulated_time = 0;   // the whole run (all rounds)
  double collective_time = 0;  // one collective, averaged over rounds
  int collective_rounds = 0;   // the rounds collective_time averages (the first group's)
  // training.streams > 1: each bucket's collective's own time, added up (collectives in flight
  // at once counted each), averaged like collective_time: what the model's isolated
  // collectives add up to, and what the model line compares with
  double collective_added = 0;
  double model_time = 0;       // the algorithm's alpha-beta formula
  LowerBound bound;            // no algorithm can do better
  double efficiency = 0;       // bound / collective_time
  double topology_bound = 0;   // max(bound, the platform's tightest cut): see model/cut_bound.hpp
  double topology_efficiency = 0;  // topology_bound / collective_time
  double algbw = 0;            // logical bytes / collective_time
  double busbw = 0;            // algbw * busbw_factor
  Verification verification;
  size_t message_count = 0;
  std::optional<Baseline> baseline;
  double time_lost = 0;        // simulated_time - baseline's (with a baseline)
  std::optional<IterationFigures> iterations;  // with training.layers or training.batch
};

RunSummary summarize(Collective collective, const SimResult& result, const Verification& verification,
                     const std::optional<Baseline>& baseline = std::nullopt);

// Evidence against truth. `culprits`: the ranks the scenario's faults struck and that
// mattered (their fault touched a transfer or a computation, sim/fault_effects.hpp, or they
// were dropped); `untouched`: struck, but their fault slowed nothing (a slowed link no
// message crossed while slow), neither culprits nor healthy; `culprits_kept`: culprits not
// dropped. `cut_off`: the members a link-down separated from the coordinator (no culprits
// of their own, but no longer healthy ranks to the group either: dropping them is no
// error, keeping them none either); `healthy_dropped`: dropped, neither struck nor cut off.
struct RecoveryQuality {
  std::vector<int> culprits, untouched, cut_off, dropped, healthy_dropped, culprits_kept;
};
RecoveryQuality recovery_quality_of(const SimResult& result);

// The iteration figures of a run's rounds (bucketed: each round's comm is its collectives'
// sum; otherwise the round's collective); `batch` samples per worker and iteration.
IterationFigures iteration_figures(const SimResult& result, std::optional<int> batch);

// An aligned two-column table, one figure per line, units shown.
std::string format_summary(const Scenario& scenario, const SimResult& result, const RunSummary& summary);

// What `collsim model` prints: the same figures from the cost model alone (its schedule
// priced on in's network, or `priced` when the caller has priced it), with the bottleneck
// link of the slowest step; `platform_rows` (the topology bound, ...) go after the lower bound.
struct ModelEstimate;
std::string format_model(Collective collective, const AlgorithmInfo& algorithm, const ModelInput& in,
                         const std::vector<std::pair<std::string, std::string>>& platform_rows = {},
                         const ModelEstimate* priced = nullptr);

struct ModelEstimate;
// `collsim model --algorithm all`: the candidates ranked by model, one line each.
std::string format_ranking(const std::vector<AutoCandidate>& ranked);
// "LINK (BANDWIDTH), crossed by N messages at once", or why there is none.
std::string describe_bottleneck(const ModelEstimate& estimate);

// Rows of "label  value" padded to one column width.
std::string format_table(const std::vector<std::pair<std::string, std::string>>& rows);

}  // namespace collsim
