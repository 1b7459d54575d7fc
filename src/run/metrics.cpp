#include "run/metrics.hpp"

#include <fmt/format.h>

#include "util/named_enum.hpp"
#include "util/units.hpp"

using nlohmann::json;

namespace collsim {

const std::vector<Metric>& metric_table() {
  using S = const RunSummary&;
  using R = const SimResult&;
  static const std::vector<Metric> table{
      {"simulated_time", MetricUnit::seconds, Better::lower, "simulated seconds of the whole run, every round",
       [](S s, R) { return json(s.simulated_time); }},
      {"collective_time", MetricUnit::seconds, Better::lower, "one collective, averaged over the rounds",
       [](S s, R) { return json(s.collective_time); }},
      {"model_time", MetricUnit::seconds, Better::informational, "the cost model of one round's collectives on this platform (with buckets, each bucket's added up)",
       [](S s, R) { return json(s.model_time); }},
      {"lower_bound", MetricUnit::seconds, Better::informational, "no algorithm can do one collective faster",
       [](S s, R) { return json(s.bound.value()); }},
      {"efficiency", MetricUnit::ratio, Better::higher, "lower_bound / collective_time",
       [](S s, R) { return json(s.efficiency); }},
      {"topology_bound", MetricUnit::seconds, Better::informational,
       "max(lower_bound, the platform's tightest cut)", [](S s, R) { return json(s.topology_bound); }},
      {"topology_efficiency", MetricUnit::ratio, Better::informational, "topology_bound / collective_time",
       [](S s, R) { return json(s.topology_efficiency); }},
      {"algbw", MetricUnit::bytes_per_second, Better::higher, "logical bytes per rank / collective_time",
       [](S s, R) { return json(s.algbw); }},
      {"busbw", MetricUnit::bytes_per_second, Better::higher, "algbw x the collective's factor (nccl-tests)",
       [](S s, R) { return json(s.busbw); }},
      {"verified", MetricUnit::flag, Better::higher, "every rank's result matches the reference",
       [](S s, R) { return json(s.verification.verified); }},
      {"wrong_elements", MetricUnit::count, Better::lower,
       "carried elements outside their tolerance, over every checked rank (nccl-tests' #wrong)",
       [](S s, R) { return json(s.verification.wrong_elements); }},
      {"models_identical", MetricUnit::flag, Better::higher,
       "every round's group holds bit-identical model weights", [](S, R r) { return json(r.models_identical); }},
      {"message_count", MetricUnit::count, Better::lower, "messages sent in the whole run",
       [](S s, R) { return json(s.message_count); }},
      {"rounds_completed", MetricUnit::count, Better::higher, "training rounds that completed",
       [](S, R r) { return json(r.rounds_completed); }},
      {"stalled", MetricUnit::flag, Better::lower, "the run never completed (a wait with no end)",
       [](S, R r) { return json(!r.stall.empty()); }},
      {"iteration_time", MetricUnit::seconds, Better::lower, "a training iteration (with layers or a batch)",
       [](S s, R) { return s.iterations ? json(s.iterations->iteration_time) : json(nullptr); }},
      {"compute_time", MetricUnit::seconds, Better::lower, "forward and backward of an iteration, slowest rank",
       [](S s, R) { return s.iterations ? json(s.iterations->compute_time) : json(nullptr); }},
      {"comm_time", MetricUnit::seconds, Better::lower, "an iteration's collectives added up",
       [](S s, R) { return s.iterations ? json(s.iterations->comm_time) : json(nullptr); }},
      {"exposed_comm", MetricUnit::seconds, Better::lower, "iteration_time - compute_time: communication not hidden",
       [](S s, R) { return s.iterations ? json(s.iterations->exposed_comm) : json(nullptr); }},
      {"overlap_fraction", MetricUnit::ratio, Better::higher, "the part of comm_time hidden behind backward",
       [](S s, R) { return s.iterations ? json(s.iterations->overlap_fraction) : json(nullptr); }},
      {"samples_per_second", MetricUnit::count, Better::higher, "training.batch x workers / iteration_time",
       [](S s, R) {
         return s.iterations && s.iterations->samples_per_second ? json(*s.iterations->samples_per_second)
                                                                 : json(nullptr);
       }},
      {"iteration_p50", MetricUnit::seconds, Better::lower, "the median iteration over the rounds (nearest rank)",
       [](S s, R) { return s.iterations ? json(s.iterations->iteration_p50) : json(nullptr); }},
      {"iteration_p99", MetricUnit::seconds, Better::lower,
       "the 99th-percentile iteration over the rounds (nearest rank): the tail that compute noise makes",
       [](S s, R) { return s.iterations ? json(s.iterations->iteration_p99) : json(nullptr); }},
      {"scaling_efficiency", MetricUnit::ratio, Better::higher,
       "T1 x p / Tp = T1 / iteration_time, T1 one worker's compute alone (nominal, times the noise's mean)",
       [](S s, R) {
         return s.iterations && s.iterations->scaling_efficiency ? json(*s.iterations->scaling_efficiency)
                                                                 : json(nullptr);
       }},
      {"memory_per_worker", MetricUnit::count, Better::lower,
       "bytes of parameters, gradients and Adam states per worker (training.layers; sharded with training.sharding)",
       [](S s, R) {
         return s.iterations && s.iterations->memory_per_worker ? json(*s.iterations->memory_per_worker) : json(nullptr);
       }},
      {"healthy_dropped", MetricUnit::count, Better::lower,
       "ranks recovery dropped that no fault struck (runs with faults or recoveries)",
       [](S, R r) {
         if (r.faults.empty() && r.recoveries.empty()) return json(nullptr);
         return json(recovery_quality_of(r).healthy_dropped.size());
       }},
      {"time_lost", MetricUnit::seconds, Better::lower, "simulated_time minus the fault-free twin's",
       [](S s, R) { return s.baseline ? json(s.time_lost) : json(nullptr); }, true},
  };
  return table;
}

const Metric* find_metric(std::string_view name) {
  for (const Metric& metric : metric_table())
    if (name == metric.name) return &metric;
  return nullptr;
}

std::vector<std::string> compared_metric_names() {
  std::vector<std::string> names;
  for (const Metric& metric : metric_table())
    if (metric.better != Better::informational) names.emplace_back(metric.name);
  return names;
}

json metric_values(const RunSummary& summary, const SimResult& result) {
  json values = json::object();
  for (const Metric& metric : metric_table()) {
    json value = metric.value(summary, result);
    if (!value.is_null()) values[metric.name] = std::move(value);
  }
  return values;
}

std::string format_metric_value(const Metric& metric, double value) {
  switch (metric.unit) {
    case MetricUnit::seconds: return format_time(value);
    case MetricUnit::bytes_per_second: return format_bandwidth(value);
    case MetricUnit::flag: return value != 0 ? "yes" : "no";
    case MetricUnit::count:
    case MetricUnit::ratio: break;
  }
  return fmt::format("{:.6g}", value);
}

std::string_view better_name(Better better) {
  static const NamedEnum<Better> table{
      "direction", {{Better::lower, "lower"}, {Better::higher, "higher"}, {Better::informational, "informational"}}};
  return table.name(better);
}

std::string_view metric_unit_name(MetricUnit unit) {
  static const NamedEnum<MetricUnit> table{"unit",
                                           {{MetricUnit::seconds, "seconds"},
                                            {MetricUnit::bytes_per_second, "bytes/s"},
                                            {MetricUnit::count, "count"},
                                            {MetricUnit::ratio, "ratio"},
                                            {MetricUnit::flag, "flag"}}};
  return table.name(unit);
}

}  // namespace collsim
