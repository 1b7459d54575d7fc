#include "report/parallel_compare.hpp"

#include <array>

using nlohmann::json;

namespace collsim {

namespace {

const std::array<Metric, 4>& step_metrics() {
  static const std::array<Metric, 4> table{{
      {"step_time", MetricUnit::seconds, Better::lower, "a parallel run: its step (the last collective's end)", nullptr},
      {"tokens_per_second", MetricUnit::count, Better::higher, "a training step: tokens / step_time", nullptr},
      {"mfu", MetricUnit::ratio, Better::higher, "a training step: model FLOPs / (step_time x GPUs x peak)", nullptr},
      {"bubble_fraction", MetricUnit::ratio, Better::lower, "a training step: the slowest rank's pipeline waits / step_time",
       nullptr},
  }};
  return table;
}

const Metric communicator_time{"comm_time.NAME", MetricUnit::seconds, Better::lower,
                               "a parallel run: a communicator's time (a step: its most busy rank's)", nullptr};
const Metric communicator_exposed{"exposed_time.NAME", MetricUnit::seconds, Better::lower,
                                  "a training step: the slowest rank's wait on a communicator", nullptr};

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.size() > prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

const Metric* parallel_metric(const std::string& name) {
  for (const Metric& metric : step_metrics())
    if (name == metric.name) return &metric;
  if (starts_with(name, "comm_time.")) return &communicator_time;
  if (starts_with(name, "exposed_time.")) return &communicator_exposed;
  return nullptr;
}

std::vector<std::string> parallel_metric_names() {
  std::vector<std::string> names;
  for (const Metric& metric : step_metrics()) names.emplace_back(metric.name);
  names.emplace_back(communicator_time.name);
  names.emplace_back(communicator_exposed.name);
  return names;
}

// json::at and get throw on a missing field or a wrong type: compare's reader turns that into
// one error line naming the file.
MetricSet parallel_metric_set(const json& trace, const std::string& source) {
  const json& parallel = trace.at("parallel");
  MetricSet set{trace.at("scenario").at("name").get<std::string>(), source, {}};
  set.metrics["step_time"] = parallel.at("step_time").get<double>();
  set.metrics["verified"] = parallel.at("verified").get<bool>() ? 1 : 0;
  set.metrics["stalled"] = parallel.contains("stalled") ? 1 : 0;
  set.metrics["message_count"] = parallel.at("message_count").get<double>();
  for (const json& communicator : parallel.at("communicators")) {
    const std::string name = communicator.at("name").get<std::string>();
    set.metrics["comm_time." + name] = communicator.at("time").get<double>();
    if (communicator.contains("exposed")) set.metrics["exposed_time." + name] = communicator.at("exposed").get<double>();
  }
  if (parallel.contains("step")) {
    const json& figures = parallel.at("step").at("figures");
    for (const char* name : {"tokens_per_second", "mfu", "bubble_fraction"}) set.metrics[name] = figures.at(name).get<double>();
  }
  return set;
}

}  // namespace collsim
