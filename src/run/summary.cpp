#include "run/summary.hpp"

#include "model/contention.hpp"
#include "model/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <fmt/format.h>

#include "comm/message_cost.hpp"
#include "training/iteration.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"

namespace collsim {

RecoveryQuality recovery_quality_of(const SimResult& result) {
  std::set<int> struck, touched, cut_off, dropped;
  for (const auto& fault : result.faults)
    if (fault.action == "applied") {
      struck.insert(fault.ranks.begin(), fault.ranks.end());
      if (fault.touched) touched.insert(fault.ranks.begin(), fault.ranks.end());
      cut_off.insert(fault.cut_off.begin(), fault.cut_off.end());
    }
  for (const auto& r : result.recoveries) dropped.insert(r.dropped_ranks.begin(), r.dropped_ranks.end());
  RecoveryQuality q;
  // A struck rank that was dropped counts as a culprit even when no delivered message shows
  // its fault: the transfers that stalled on it were abandoned, not delivered.
  for (int rank : struck)
    (touched.count(rank) || dropped.count(rank) ? q.culprits : q.untouched).push_back(rank);
  q.cut_off.assign(cut_off.begin(), cut_off.end());
  q.dropped.assign(dropped.begin(), dropped.end());
  for (int rank : dropped)
    if (!struck.count(rank) && !cut_off.count(rank)) q.healthy_dropped.push_back(rank);
  for (int rank : q.culprits)
    if (!dropped.count(rank)) q.culprits_kept.push_back(rank);
  return q;
}

namespace {

// The q-th quantile of `values` by the nearest rank: the smallest value with at least
// q x n values at or below it.
double nearest_rank(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

// The rounds' p50 and p99, and T1 / iteration_time (IterationFigures::scaling_efficiency).
void add_tail_and_scaling(IterationFigures& f, const SimResult& result) {
  std::vector<double> iterations;
  for (const auto& round : result.rounds) iterations.push_back(round.end - round.start);
  f.iteration_p50 = nearest_rank(iterations, 0.5);
  f.iteration_p99 = nearest_rank(iterations, 0.99);
  const TrainingSpec& training = result.plan->scenario.training;
  if (!training.has_layers() && training.compute_flops > 0) return;
  const PassSeconds pass = pass_seconds(training.layers);
  const double nominal = training.has_layers() ? pass.forward + pass.backward : training.compute;
  f.single_worker_time = nominal * noise_mean(training.noise);
  if (f.iteration_time > 0 && f.single_worker_time > 0) f.scaling_efficiency = f.single_worker_time / f.iteration_time;
}

}  // namespace

IterationFigures iteration_figures(const SimResult& result, std::optional<int> batch) {
  IterationFigures f;
  f.buckets = std::max(1, result.plan->training.bucket_count());
  double samples = 0;
  for (const auto& round : result.rounds) {
    const double iteration = round.end - round.start;
    const double compute = std::max(0.0, round.compute_end - round.start);
    f.iteration_time += iteration;
    f.compute_time += compute;
    f.comm_time += result.plan->training.bucket_count() > 0 ? round.comm : round.end - round.collective_start;
    f.exposed_comm += std::max(0.0, iteration - compute);
    if (batch) samples += static_cast<double>(*batch) * static_cast<double>(round.group.size());
  }
  if (batch && f.iteration_time > 0) f.samples_per_second = samples / f.iteration_time;
  if (result.plan->training.memory_per_worker > 0) f.memory_per_worker = result.plan->training.memory_per_worker;
  if (f.comm_time > 0) f.overlap_fraction = std::clamp((f.comm_time - f.exposed_comm) / f.comm_time, 0.0, 1.0);
  const double rounds = std::max<double>(1, static_cast<double>(result.rounds.size()));
  f.iteration_time /= rounds;
  f.compute_time /= rounds;
  f.comm_time /= rounds;
  f.exposed_comm /= rounds;
  add_tail_and_scaling(f, result);
  return f;
}

namespace {

// The model of what the run's collective time measures: one collective, or each bucket's
// one after the other, added up.
double model_of_what_ran(const RunPlan& plan) {
  const std::vector<uint64_t>& buckets = plan.payload.part_logical;
  const TrainingPlan& training = plan.training;
  if (buckets.size() < 2) {
    ModelInput one = plan.model;
    one.deployment = training.deployment_of(plan.model.deployment, 0);
    return model_time(*plan.choice.algorithm, one) + training.launch_seconds(training.buckets.empty() ? -1 : 0);
  }
  // one collective per bucket, one after the other: their models (and launches) added up
  double total = 0;
  for (size_t b = 0; b < buckets.size(); ++b) {
    ModelInput bucket = plan.model;
    bucket.elems = buckets[b];
    bucket.deployment = training.deployment_of(plan.model.deployment, b);
    total += model_time(*plan.choice.algorithm, bucket) + training.launch_seconds(static_cast<int>(b));
  }
  return total;
}

// Whether a fault of the run struck round `round`: one given at_round N strikes rounds N on
// (it is applied when the first worker starts round N, while the last may still be ending
// round N - 1's collective untouched); one given at a time strikes the rounds that had not
// ended when it was applied; either until it was undone.
bool fault_struck(const SimResult& result, const FaultEvent& applied, const RoundRecord& round) {
  double undone = std::numeric_limits<double>::infinity();
  for (const FaultEvent& event : result.faults)
    if (event.fault == applied.fault && event.action == "undone" && event.time >= applied.time)
      undone = std::min(undone, event.time);
  if (undone <= round.start) return false;
  for (const PlannedFault& planned : result.plan->faults)
    if (planned.index == applied.fault && planned.spec.at_round) return round.round >= *planned.spec.at_round;
  return applied.time < round.end;
}

// Why the collective time does not compare with the model (which prices fault-free
// collectives of the run's algorithm), or "" when it does.
std::string unlike_the_model(const SimResult& result) {
  const TrainingPlan& training = result.plan->training;
  if (training.sharding != Sharding::none)
    return fmt::format("{} runs each bucket's reduce-scatter and all-gather apart, overlapped with the computation, "
                       "where the model prices allreduces", sharding_names().name(training.sharding));
  // the rounds the collective time measures (summarize): the first group's
  const bool first_group_completed = std::any_of(result.rounds.begin(), result.rounds.end(),
                                                 [](const RoundRecord& r) { return r.epoch == 0; });
  bool measured = false;
  for (const RoundRecord& round : result.rounds)
    if (round.epoch == 0 || !first_group_completed) {
      measured = true;
      for (const FaultEvent& fault : result.faults)
        if (fault.action == "applied" && fault_struck(result, fault, round))
          return "the rounds measured include a fault, where the model is the fault-free collective";
    }
  // a run that stalled after fault-free rounds compares them; one that completed none has nothing to compare
  if (!measured && !result.stall.empty()) return "the run stalled before it completed a round";
  return "";
}

}  // namespace

RunSummary summarize(Collective collective, const SimResult& result, const Verification& verification,
                     const std::optional<Baseline>& baseline) {
  RunSummary s;
  s.simulated_time = result.simulated_time;
  s.baseline = baseline;
  if (baseline && result.stall.empty()) s.time_lost = result.simulated_time - baseline->simulated_time;
  // One collective's time: averaged over the rounds of the first group (before any fault
  // rebuilt it), so that it compares with the model.
  // (all rounds when a fault struck in the very first one)
  const bool first_group_completed = std::any_of(result.rounds.begin(), result.rounds.end(),
                                                 [](const RoundRecord& r) { return r.epoch == 0; });
  double total = 0, added = 0;
  int counted = 0;
  for (const auto& round : result.rounds)
    if ((round.epoch == 0 || !first_group_completed) && round.end >= round.collective_start) {
      // With buckets, the collectives of a round overlap backward: add up their own times.
      total += result.plan->training.bucket_count() > 0 ? round.comm : round.end - round.collective_start;
      added += round.comm_added;
      ++counted;
    }
  s.collective_time = counted == 0 ? 0 : total / counted;
  s.collective_added = counted == 0 ? 0 : added / counted;
  s.collective_rounds = counted;
  s.model_time = model_of_what_ran(*result.plan);
  s.bound = lower_bound(collective, result.plan->model);
  s.efficiency = s.collective_time > 0 ? s.bound.value() / s.collective_time : 1.0;
  s.topology_bound = std::max(s.bound.value(), result.plan->topology_bound.time);
  s.topology_efficiency = s.collective_time > 0 ? s.topology_bound / s.collective_time : 1.0;
  s.algbw = s.collective_time > 0 ? result.plan->payload.logical_bytes / s.collective_time : 0;
  s.busbw = s.algbw * busbw_factor(collective, result.plan->workers);
  s.verification = verification;
  s.message_count = result.messages.count();
  if (result.plan->training.bucket_count() > 0 || result.plan->training.batch) s.iterations = iteration_figures(result, result.plan->training.batch);
  return s;
}

std::string format_table(const std::vector<std::pair<std::string, std::string>>& rows) {
  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  std::string out;
  for (const auto& [label, value] : rows) out += fmt::format("  {:<{}}  {}\n", label, width, value);
  return out;
}

namespace {

// The latency a message pays: the links' alpha, or on GPUs (NCCL's algorithms, collsim's on
// NCCL's send/recv) the transport's, which takes the links' place (platform.hpp,
// latency_in_transport): its hop latencies from rank 0 and its launch per collective.
std::string latency_text(const RunPlan& plan) {
  const MessageCost* cost = plan.model.message_cost.get();
  if (cost == nullptr || plan.workers < 2) return fmt::format("alpha {}", format_time(plan.model.alpha));
  double low = std::numeric_limits<double>::infinity(), high = 0;
  for (int r = 1; r < plan.workers; ++r) {
    const double hop = cost->price(0, r).hop_latency;
    low = std::min(low, hop);
    high = std::max(high, hop);
  }
  const std::string hops = low == high ? format_time(low) : fmt::format("{} to {}", format_time(low), format_time(high));
  // (collsim's own algorithms launch a kernel with each message a GPU receives: in its hop)
  if (cost->collective_overhead() == 0)
    return fmt::format("no latency on the links: NCCL's hop latency {} per message, a kernel's launch included, instead",
                       hops);
  return fmt::format("no latency on the links: NCCL's hop latency {} per message and {} launch per collective instead",
                     hops, format_time(cost->collective_overhead()));
}

// One entry per recovery decision: a rebuild, a join, a root kept, a doubt.
std::string format_recoveries(const std::vector<RecoveryEvent>& recoveries) {
  std::string out;
  for (const auto& r : recoveries) {
    std::vector<std::string> dropped;
    for (size_t i = 0; i < r.dropped_ranks.size(); ++i)
      dropped.push_back(fmt::format("rank {} ({})", r.dropped_ranks[i], r.dropped_hosts[i]));
    if (!r.joined_ranks.empty()) {
      out += fmt::format("  recovery  epoch {} -> {}: {} ({} ranks)\n", r.epoch_before, r.epoch_after, r.reason,
                         r.group.size());
      continue;
    }
    const std::string prediction =
        r.prediction_keep < 0 ? ""
                              : fmt::format("            predicted for the rounds left: keep {}, drop {}\n",
                                            format_time(r.prediction_keep), format_time(r.prediction_drop));
    if (!r.rebuilds()) {  // a root kept, a doubt, or a rebuild refused: the group goes on (or stops) as it was
      out += fmt::format("  recovery  epoch {}: {}\n            detected {}\n{}", r.epoch_before, r.reason,
                         format_time(r.detected), prediction);
      continue;
    }
    out += fmt::format("  recovery  epoch {} -> {}: {}: {}\n", r.epoch_before, r.epoch_after,
                       dropped.empty() ? "nobody dropped" : "dropped " + join(dropped), r.reason);
    out += fmt::format("            fault {}, detected {}, rebuilt {}, resumed {}, round {} completed {}\n",
                       r.fault_time < 0 ? "-" : format_time(r.fault_time), format_time(r.detected),
                       format_time(r.rebuilt), r.resumed < 0 ? "-" : format_time(r.resumed), r.round,
                       r.round_completed < 0 ? "never" : format_time(r.round_completed));
    if (!r.postponed_ranks.empty())
      out += fmt::format("            postponed rank{} {}: joining, without the state of round {}; rejoin{} at a later round\n",
                         r.postponed_ranks.size() > 1 ? "s" : "", fmt::join(r.postponed_ranks, ", "), r.round,
                         r.postponed_ranks.size() > 1 ? "" : "s");
    out += prediction;
  }
  return out;
}

// training.streams > 1 with buckets: collectives in flight at once.
bool several_streams(const SimResult& result) {
  return result.plan->scenario.training.streams > 1 && result.plan->training.bucket_count() > 1;
}

// What each bucket ran, for people: allreduces, or what took their place (asynchronous
// servers take pushes and answer pulls; zero2 reduce-scatters, then all-gathers).
std::string bucket_collectives(const RunPlan& plan) {
  if (plan.model.deployment.asynchronous) return "bucket pushes and pulls";
  if (plan.training.sharding == Sharding::zero2) return "bucket reduce-scatters and all-gathers";
  return "bucket allreduces";
}

// The collective time's row: what it averages or adds up.
std::string describe_collective_time(const SimResult& result, const RunSummary& s) {
  const int buckets = result.plan->training.bucket_count();
  const std::string ran = bucket_collectives(*result.plan);
  std::string what = buckets > 1 ? fmt::format("its {} {} added up", buckets, ran) : "one collective";
  if (several_streams(result))
    what = fmt::format("its {} {} on {} streams: the time at least one was in flight", buckets, ran,
                       result.plan->scenario.training.streams);
  const bool all_rounds = static_cast<size_t>(s.collective_rounds) >= result.rounds.size();
  if (all_rounds && s.collective_rounds <= 1) return fmt::format("{} ({})", format_time(s.collective_time), what);
  if (all_rounds)
    return fmt::format("{} per round ({}; the mean of {} rounds)", format_time(s.collective_time), what,
                       s.collective_rounds);
  if (s.collective_rounds <= 1)
    return fmt::format("{} ({}: the first group's one round, before the rebuild)", format_time(s.collective_time), what);
  return fmt::format("{} per round ({}; the mean of the first group's {} rounds, before the rebuild)",
                     format_time(s.collective_time), what, s.collective_rounds);
}

// Whether a run is more than its collective: rounds, computation or layers.
bool more_than_a_collective(const Scenario& scenario) {
  return scenario.training.rounds > 1 || scenario.training.compute > 0 || scenario.training.compute_flops > 0 ||
         scenario.training.has_layers();
}

// "simulated time" is the whole run, as in the trace, the HTML report and sweep tables;
// when the run is more than one collective, the mean collective has its own row (and the
// model line compares with it).
void add_time_rows(std::vector<std::pair<std::string, std::string>>& rows, const Scenario& scenario,
                   const SimResult& result, const RunSummary& s) {
  const int rounds = scenario.training.rounds;
  const std::string whole_run = result.stall.empty()
                                    ? fmt::format("the whole run, {} round{}", rounds, rounds == 1 ? "" : "s")
                                    : fmt::format("the whole run, stalled after {} of {} rounds", result.rounds_completed, rounds);
  rows.emplace_back("simulated time", more_than_a_collective(scenario)
                                          ? fmt::format("{} ({})", format_time(s.simulated_time), whole_run)
                                          : format_time(s.collective_time));
  if (more_than_a_collective(scenario)) rows.emplace_back("collective time", describe_collective_time(result, s));
}

// training.launch: the framework's costs of an iteration's collectives, apart from the network's.
std::string describe_launches(const TrainingPlan& training, const RunSummary& s) {
  const int collectives = std::max(1, training.bucket_count());
  int tensors = training.buckets.empty() ? 1 : 0;
  for (const BucketSlice& slice : training.buckets) tensors += slice.bucket.last - slice.bucket.first + 1;
  const double total = collectives * training.launch_per_collective + tensors * training.launch_per_tensor;
  return fmt::format("{} per iteration ({} collective{} x {} + {} tensor{} x {}), in the collective time and the "
                     "model; the network's share of the model: {}",
                     format_time(total), collectives, collectives > 1 ? "s" : "", format_time(training.launch_per_collective),
                     tensors, tensors > 1 ? "s" : "", format_time(training.launch_per_tensor),
                     format_time(s.model_time - total));
}

// The model's time, the bounds and the efficiency against them.
void add_bound_rows(std::vector<std::pair<std::string, std::string>>& rows, const Scenario& scenario,
                    const SimResult& result, const RunSummary& s) {
  const std::string unlike = unlike_the_model(result);
  const size_t buckets = result.plan->payload.part_logical.size();
  const std::string what = buckets > 1 ? fmt::format("its {} bucket {}s' models added up; ", buckets,
                                                     collective_name(scenario.collective.kind))
                                       : "";
  if (unlike.empty() && several_streams(result))
    // the collective time counts buckets in flight at once once; the model prices each alone
    rows.emplace_back("model time", fmt::format("{} ({}against each bucket's collective's own time, added up: {} with {} "
                                                "streams, /model = {:.6f})", format_time(s.model_time), what,
                                                format_time(s.collective_added), result.plan->scenario.training.streams,
                                                s.model_time > 0 ? s.collective_added / s.model_time : 1.0));
  else if (unlike.empty())
    rows.emplace_back("model time", fmt::format("{} ({}{}/model = {:.6f})", format_time(s.model_time), what,
                                                more_than_a_collective(scenario) ? "collective" : "simulated",
                                                s.model_time > 0 ? s.collective_time / s.model_time : 1.0));
  else
    rows.emplace_back("model time", fmt::format("{} ({}fault-free; not compared: {})", format_time(s.model_time),
                                                what, unlike));
  if (result.plan->training.launch_per_collective > 0 || result.plan->training.launch_per_tensor > 0)
    rows.emplace_back("framework", describe_launches(result.plan->training, s));
  rows.emplace_back("lower bound", fmt::format("{} (bandwidth {}, latency {})", format_time(s.bound.value()),
                                               format_time(s.bound.bandwidth_term), format_time(s.bound.latency_term)));
  const CutBound& cut = result.plan->topology_bound;
  if (cut.time > s.bound.value())
    rows.emplace_back("topology bound",
                      fmt::format("{} (cut {}: {} at {}{})", format_time(s.topology_bound), cut.cut, format_size(cut.bytes),
                                  format_bandwidth(cut.capacity),
                                  cut.bottleneck_links.empty() ? "" : ", through " + join(cut.bottleneck_links)));
  else
    rows.emplace_back("topology bound", fmt::format("{} (no cut of the platform is tighter than the lower bound)",
                                                    format_time(s.topology_bound)));
  if (!unlike.empty()) {
    rows.emplace_back("efficiency", "not given: " + unlike);
    return;
  }
  rows.emplace_back("efficiency",
                    fmt::format("{:.1f}% of the lower bound, {:.1f}% of the topology bound{}", 100 * s.efficiency,
                                100 * s.topology_efficiency,
                                s.efficiency > 1 ? " (above 100%: ranks sent to several peers at once, which the "
                                                   "single-port latency term ceil(log2 p) alpha does not allow)"
                                                 : ""));
}

// Whether every rank's result checked out, and within what.
std::string verified_row(const Scenario& scenario, const Verification& v) {
  // The error allowed per element (exact for integers, min and max, bit for bit for data
  // that is only moved, or the type's rounding bound) is printed for the types other than
  // the default float32; the trace's summary.tolerance always has it.
  std::string within;
  if (scenario.collective.dtype != Dtype::float32)
    within = v.tolerance == "exact" || v.tolerance == "bit for bit" ? ", " + v.tolerance
                                                                     : fmt::format(" within {}", v.tolerance);
  if (v.verified)
    return fmt::format("yes ({} rank{}, max error {:.3g}{}, {})", v.checked_ranks, v.checked_ranks == 1 ? "" : "s",
                       v.max_error, within, v.bitwise_identical ? "bitwise identical" : "ranks differ in the last bits");
  if (v.wrong_elements == 0) return fmt::format("NO: {}", v.failure);
  return fmt::format("NO: {} wrong element{} ({} allowed); first: {}", v.wrong_elements,
                     v.wrong_elements == 1 ? "" : "s", v.tolerance, v.failure);
}

// Asynchronous and bounded-staleness servers: how stale the applied pushes were.
std::string describe_staleness(const SimResult& result) {
  int largest = 0;
  double total = 0;
  for (const ServerUpdate& u : result.updates) {
    largest = std::max(largest, u.staleness);
    total += u.staleness;
  }
  const int bound = result.plan->model.deployment.staleness;
  return fmt::format("max {}, mean {:.6g} iterations over {} pushes applied by {} server{} ({})", largest,
                     result.updates.empty() ? 0.0 : total / static_cast<double>(result.updates.size()),
                     result.updates.size(), result.plan->model.servers, result.plan->model.servers == 1 ? "" : "s",
                     bound < 0 ? "asynchronous: no bound" : fmt::format("bounded: at most {}", bound));
}

// Recovery, rounds and time lost (with faults or rounds); the iteration's figures (layered training).
void add_run_rows(std::vector<std::pair<std::string, std::string>>& rows, const Scenario& scenario,
                  const SimResult& result, const RunSummary& s) {
  if (!result.faults.empty() || !result.recoveries.empty() || scenario.training.rounds > 1) {
    if (scenario.recovery.policy == RecoveryPolicy::rebuild)
      rows.emplace_back("recovery", fmt::format("rebuild, timeout {} ({} per wait)", scenario.recovery.timeout_text,
                                                format_time(result.timeout)));
    rows.emplace_back("rounds done", fmt::format("{} of {}, total {}", result.rounds_completed,
                                                 scenario.training.rounds, format_time(s.simulated_time)));
    if (s.baseline && result.stall.empty())
      rows.emplace_back("time lost", fmt::format("{} against the fault-free run ({})", format_time(s.time_lost),
                                                 format_time(s.baseline->simulated_time)));
    // asynchronous servers answer each worker with the model as it is then: copies differ by design
    if (!result.models_identical && !result.plan->model.deployment.asynchronous)
      rows.emplace_back("model copies", "DIFFER between ranks");
  }
  if (result.plan->model.deployment.asynchronous) rows.emplace_back("staleness", describe_staleness(result));
  if (s.iterations) {
    const IterationFigures& it = *s.iterations;
    rows.emplace_back("iteration", fmt::format("{}: compute {}, communication {} in {} bucket{}", format_time(it.iteration_time),
                                               format_time(it.compute_time), format_time(it.comm_time), it.buckets,
                                               it.buckets == 1 ? "" : "s"));
    // zero3's all-gathers hide behind forward as well
    rows.emplace_back("exposed comm", fmt::format("{} ({:.1f}% of the communication hidden behind {})",
                                                  format_time(it.exposed_comm), 100 * it.overlap_fraction,
                                                  result.plan->training.sharding == Sharding::zero3 ? "compute" : "backward"));
    if (result.rounds.size() > 1)
      rows.emplace_back("tail", fmt::format("p50 {}, p99 {} over {} iterations", format_time(it.iteration_p50),
                                            format_time(it.iteration_p99), result.rounds.size()));
    if (it.scaling_efficiency)
      rows.emplace_back("scaling", fmt::format("{:.1f}% (T1 x p / Tp: one worker alone, {} per iteration, against {})",
                                               100 * *it.scaling_efficiency, format_time(it.single_worker_time),
                                               format_time(it.iteration_time)));
    if (it.samples_per_second)
      rows.emplace_back("throughput", fmt::format("{:.6g} samples/s ({} per worker and iteration)", *it.samples_per_second,
                                                  *result.plan->training.batch));
    if (it.memory_per_worker)
      rows.emplace_back("memory", fmt::format("{} per worker (parameters, gradients, Adam states{})",
                                              format_size(*it.memory_per_worker),
                                              result.plan->training.sharding == Sharding::zero2   ? "; zero2: gradients and states sharded"
                                              : result.plan->training.sharding == Sharding::zero3 ? "; zero3: all three sharded"
                                                                                   : ""));
  }
}

// --algorithm auto's candidates, best first, the one that ran marked.
std::string format_candidates(const SimResult& result) {
  std::string out;
  if (result.plan->choice.candidates.empty()) return out;
  const bool simulated = result.plan->choice.by == "simulate";
  out += simulated ? "  auto      candidates by simulated time (best first):   model\n"
                   : "  auto      candidates by model time (best first):       bottleneck of the slowest step\n";
  const auto& candidates = result.plan->choice.candidates;
  for (const auto& c : candidates) {
    std::string time = simulated ? (c.simulated_time ? format_time(*c.simulated_time) : "failed") : format_time(c.model_time);
    if (simulated) time = fmt::format("{:<14}{}", time, format_time(c.model_time));
    else if (!c.skipped.empty()) time = "impractical: " + c.skipped;
    else if (!c.bottleneck.empty()) time = fmt::format("{:<14}{} ({} message{})", time, c.bottleneck, c.sharing, c.sharing == 1 ? "" : "s");
    // the first runs (best first; a variant on channels is a row of its own)
    out += fmt::format("            {:<20} {}{}\n", c.label(), time, &c == &candidates.front() ? "  <- runs" : "");
  }
  return out;
}

// The rounds, one line each (the first 20).
std::string format_rounds(const SimResult& result) {
  std::string out;
  if (result.rounds.size() <= 1 && result.recoveries.empty()) return out;
  out += "  round  epoch  ranks  time";
  out += result.rounds.empty() || !result.rounds.front().loss ? "\n" : "          loss\n";
  for (size_t i = 0; i < result.rounds.size() && i < 20; ++i) {
    const RoundRecord& r = result.rounds[i];
    out += fmt::format("  {:>5}  {:>5}  {:>5}  ", r.round, r.epoch, r.group.size());
    out += r.loss ? fmt::format("{:<14}{:.6g}", format_time(r.end - r.start), *r.loss) : format_time(r.end - r.start);
    out += "\n";
  }
  if (result.rounds.size() > 20) out += fmt::format("  ... {} rounds in all (see the trace)\n", result.rounds.size());
  return out;
}

}  // namespace

std::string format_summary(const Scenario& scenario, const SimResult& result, const RunSummary& s) {
  std::vector<std::pair<std::string, std::string>> rows{
      {"collective", fmt::format("{} / {}", collective_name(scenario.collective.kind), result.plan->choice.algorithm->name)},
      {"workers", fmt::format("{} on {}", result.plan->workers, result.plan->platform.source)},
      {"network", fmt::format("{} ({}, B {}{})", network_model_name(scenario.network), latency_text(*result.plan),
                              format_bandwidth(result.plan->model.bandwidth),
                              result.plan->model.overhead > 0 ? ", overhead o " + format_time(result.plan->model.overhead) : "")},
      {"size", fmt::format("{} {} per rank ({} element{} carried)", format_size(result.plan->payload.logical_bytes),
                           dtype_name(scenario.collective.dtype), result.plan->payload.carried_elems,
                           result.plan->payload.carried_elems == 1 ? "" : "s")},
  };
  add_time_rows(rows, scenario, result, s);
  add_bound_rows(rows, scenario, result, s);
  // a stalled run moved part of its bytes: no bandwidth to speak of
  rows.emplace_back("algbw", result.stall.empty() ? format_bandwidth(s.algbw) : "not given: the run stalled");
  rows.emplace_back("busbw", result.stall.empty() ? format_bandwidth(s.busbw) : "not given: the run stalled");
  rows.emplace_back("messages", fmt::format("{}", s.message_count));
  if (scenario.training.has_layers())
    rows.emplace_back("replay", result.replay_off.empty()
                                    ? fmt::format("{} of {} bucket collectives replayed (training.replay)", result.replayed,
                                                  result.replayed + result.simulated)
                                    : fmt::format("off: {}", result.replay_off));
  rows.emplace_back("verified", verified_row(scenario, s.verification));
  add_run_rows(rows, scenario, result, s);
  std::string out = format_table(rows);
  out += format_candidates(result);
  for (const auto& f : result.faults)
    out += fmt::format("  fault     {:>12}  {} {} {}\n", format_time(f.time), f.kind, f.action, f.target);
  out += format_recoveries(result.recoveries);
  out += format_rounds(result);
  for (const auto& note : result.plan->notes) out += fmt::format("  note: {}\n", note);
  return out;
}

std::string format_ranking(const std::vector<AutoCandidate>& ranked) {
  std::string out = "     algorithm            model time    bottleneck of the slowest step\n";
  for (size_t i = 0; i < ranked.size(); ++i) {
    const AutoCandidate& c = ranked[i];
    std::string detail = c.bottleneck.empty() ? "latency and overheads only"
                                              : fmt::format("{} ({} message{})", c.bottleneck, c.sharing, c.sharing == 1 ? "" : "s");
    if (!c.skipped.empty())
      out += fmt::format("  {:>2} {:<20} {:<13} impractical here: {}\n", i + 1, c.label(), "-", c.skipped);
    else
      out += fmt::format("  {:>2} {:<20} {:<13} {}\n", i + 1, c.label(), format_time(c.model_time), detail);
  }
  return out;
}

std::string describe_bottleneck(const ModelEstimate& estimate) {
  if (estimate.bottleneck.empty()) return "none: latency and overheads only";
  return fmt::format("{} ({}), crossed by {} message{} at once", estimate.bottleneck,
                     format_bandwidth(estimate.bottleneck_bandwidth), estimate.sharing, estimate.sharing == 1 ? "" : "s");
}

std::string format_model(Collective collective, const AlgorithmInfo& algorithm, const ModelInput& in,
                         const std::vector<std::pair<std::string, std::string>>& platform_rows,
                         const ModelEstimate* priced) {
  const ModelEstimate estimate = priced != nullptr ? *priced : estimate_schedule(algorithm.schedule(in), in);
  const double time = estimate.time;
  const LowerBound bound = lower_bound(collective, in);
  const double bytes = in.bytes(in.elems);
  const double algbw = time > 0 ? bytes / time : 0;
  std::vector<std::pair<std::string, std::string>> rows{
      {"collective", fmt::format("{} / {}", collective_name(collective), algorithm.name)},
      {"formula", algorithm.summary},
      {"workers", fmt::format("{}", in.p)},
      {"size", format_size(bytes)},
      {"alpha", format_time(in.alpha)},
      {"overhead", format_time(in.overhead)},
      {"bandwidth", format_bandwidth(in.bandwidth)},
      {"model time", format_time(time)},
      {"steps", fmt::format("{} ({} distinct pattern{}); the slowest takes {}", estimate.steps, estimate.patterns, estimate.patterns == 1 ? "" : "s",
                            format_time(estimate.slowest_step_time))},
      {"bottleneck", describe_bottleneck(estimate)},
      {"lower bound", fmt::format("{} (bandwidth {}, latency {})", format_time(bound.value()),
                                  format_time(bound.bandwidth_term), format_time(bound.latency_term))},
  };
  rows.insert(rows.end(), platform_rows.begin(), platform_rows.end());
  rows.insert(rows.end(), {
      {"efficiency", fmt::format("{:.1f}% of the lower bound", time > 0 ? 100 * bound.value() / time : 100.0)},
      {"algbw", format_bandwidth(algbw)},
      {"busbw", format_bandwidth(algbw * busbw_factor(collective, in.p))},
  });
  return format_table(rows);
}

}  // namespace collsim
