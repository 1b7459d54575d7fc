#include "plan/auto_choice.hpp"

#include <algorithm>
#include <map>
#include <fmt/format.h>
#include <optional>
#include <stdexcept>

#include "model/contention.hpp"
#include "model/cost_model.hpp"
#include "util/suggest.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace collsim {

AutoCandidate model_candidate(const AlgorithmInfo& algorithm, const ModelInput& in, bool model_only) {
  AutoCandidate candidate(algorithm.name);
  const std::optional<Schedule> schedule = model_only ? schedule_within_model_limits(algorithm, in, candidate.skipped)
                                                      : std::optional<Schedule>(algorithm.schedule(in));
  if (!schedule) return candidate;
  candidate.skipped = model_only ? model_limit_reason(*schedule) : impractical_reason(*schedule);
  if (!candidate.skipped.empty()) return candidate;
  const ModelEstimate estimate = estimate_schedule(*schedule, in);
  candidate.model_time = estimate.time;
  candidate.bottleneck = estimate.bottleneck;
  candidate.sharing = estimate.sharing;
  return candidate;
}

namespace {

// The channel counts auto tries for an algorithm that reads collective.channels, when the
// scenario leaves them at 1: 2, 4, ... up to the largest locality group (channel c's rings turn
// by c members inside each group: more channels than members repeat the rings) and at most 16
// (NCCL's channel search, src/nccl/tuner.cpp, finds at most 16 rings either).
std::vector<int> channel_variants(const ModelInput& in) {
  if (in.channels != 1 || in.locality.empty()) return {};
  std::map<int, int> members;
  for (int id : in.locality) ++members[id];
  int largest = 0;
  for (const auto& [id, count] : members) largest = std::max(largest, count);
  std::vector<int> counts;
  for (int k = 2; k <= std::min({largest, 16, max_channels}); k *= 2) counts.push_back(k);
  return counts;
}

// Its messages, every round: beyond what a run simulates, a variant is impractical here.
double schedule_messages(const Schedule& schedule) {
  double messages = 0;
  for (const Step& step : schedule.steps()) messages += static_cast<double>(step.flows.size()) * step.repeat;
  return messages;
}

}  // namespace

std::vector<AutoCandidate> rank_by_model(Collective collective, const ModelInput& in, bool model_only) {
  std::vector<AutoCandidate> table;
  for (const AlgorithmInfo& candidate : all_algorithms()) {
    if (candidate.collective != collective || !candidate.builtin || candidate.uses.nccl) continue;
    table.push_back(model_candidate(candidate, in, model_only));
    if (!candidate.uses.channels) continue;
    for (int k : channel_variants(in)) {
      ModelInput variant = in;
      variant.channels = k;
      // (the model has no run limit: its own are model_candidate's)
      const double messages = model_only ? 0 : schedule_messages(candidate.schedule(variant));
      AutoCandidate row(candidate.name);
      if (messages > max_run_messages)
        row.skipped = fmt::format("{:.3g} messages on {} channels, beyond what a run simulates ({:.0e})", messages, k,
                                  max_run_messages);
      else
        row = model_candidate(candidate, variant, model_only);
      row.channels = k;
      table.push_back(row);
    }
  }
  auto key = [](const AutoCandidate& c) {
    return c.skipped.empty() ? c.model_time : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(table.begin(), table.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  return table;
}

void order_candidates(std::vector<AutoCandidate>& table) {
  auto key = [](const AutoCandidate& c) {
    if (!c.skipped.empty() || !c.error.empty()) return std::numeric_limits<double>::infinity();
    return c.simulated_time ? *c.simulated_time : c.model_time;
  };
  std::stable_sort(table.begin(), table.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
}

const AlgorithmInfo& choose_algorithm(Collective collective, const std::vector<AutoCandidate>& simulated,
                                      const std::function<ModelInput(const AlgorithmInfo&)>& model_for,
                                      RunPlan& plan) {
  const bool by_simulation = !simulated.empty();
  std::vector<AutoCandidate> table = simulated;
  if (!by_simulation) table = rank_by_model(collective, model_for(all_algorithms().front()), plan.model_only);
  // Best first: by simulated time when simulated (failed candidates last), else by model
  // (impractical ones last).
  auto key = [&](const AutoCandidate& c) {
    if (!by_simulation) return c.skipped.empty() ? c.model_time : std::numeric_limits<double>::infinity();
    return c.simulated_time ? *c.simulated_time : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(table.begin(), table.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  if (table.empty() || key(table.front()) == std::numeric_limits<double>::infinity())
    throw InputError(fmt::format("collective.algorithm: auto found no {} algorithm that completes here",
                                 collective_name(collective)));
  const AlgorithmInfo& best = find_algorithm(collective, table.front().algorithm, "collective.algorithm");
  const char* measure = by_simulation ? "simulated" : "predicted";
  std::string why = fmt::format("auto chose {} by {}: {} {}", table.front().label(), by_simulation ? "simulation" : "model",
                                measure, format_time(key(table.front())));
  if (table.size() > 1 && key(table[1]) != std::numeric_limits<double>::infinity()) {
    const double ratio = key(table[1]) / key(table[0]);
    // a tie (the same schedule under two names, as hierarchical with one group and ring)
    // goes to the first in registry order
    if (ratio <= 1 + 1e-9)
      why += fmt::format(", tied with {}", table[1].label());
    else if (ratio < 1.1)
      why += fmt::format(", {:.2g}% faster than {} ({})", 100 * (ratio - 1), table[1].label(),
                         format_time(key(table[1])));
    else
      why += fmt::format(", {:.2f}x faster than {} ({})", ratio, table[1].label(), format_time(key(table[1])));
  }
  const LowerBound bound = lower_bound(collective, plan.model);
  why += bound.latency_term > bound.bandwidth_term ? "; latency-bound: few steps matter most"
                                                   : "; bandwidth-bound: bytes per link matter most";
  if (by_simulation) {
    const auto by_model = std::min_element(table.begin(), table.end(),
                                           [](const auto& a, const auto& b) { return a.model_time < b.model_time; });
    if (by_model->algorithm != best.name)
      why += fmt::format("; the model would have chosen {} (the simulation sees what it does not: flows out of "
                         "step, the realistic network's TCP effects)",
                         by_model->algorithm);
  }
  std::vector<std::string> skipped;
  for (const AutoCandidate& c : table)
    if (!c.skipped.empty()) skipped.push_back(fmt::format("{} ({})", c.label(), c.skipped));
  if (!skipped.empty()) why += "; impractical here, not considered: " + join(skipped, "; ");
  if (!by_simulation && !table.front().bottleneck.empty())
    why += fmt::format("; its slowest step is paced by {} ({} message{})", table.front().bottleneck,
                       table.front().sharing, table.front().sharing == 1 ? "" : "s");
  plan.notes.push_back(why);
  plan.choice.reason = why;
  plan.choice.candidates = table;
  plan.choice.by = by_simulation ? "simulate" : "model";
  // a variant on channels runs on them: the run and the model read model.channels
  if (table.front().channels > 0) plan.model.channels = plan.scenario.collective.channels = table.front().channels;
  return best;
}

}  // namespace collsim
