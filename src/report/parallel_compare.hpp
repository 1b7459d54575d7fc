#pragma once
// What `compare` reads in a parallel run's trace (docs/trace-format.md#parallel-runs): its
// step time, each communicator's time (comm_time.NAME) and, for a training step, the time the
// slowest rank waited on each (exposed_time.NAME), tokens per second, MFU and the bubble.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/compare.hpp"
#include "run/metrics.hpp"

namespace collsim {

// The metric of a parallel trace called `name`, or nullptr.
const Metric* parallel_metric(const std::string& name);

// Their names, for the help and errors: "step_time, ..., comm_time.NAME, exposed_time.NAME".
std::vector<std::string> parallel_metric_names();

// The metrics of a trace with a `parallel` section, identified by its scenario's name.
MetricSet parallel_metric_set(const nlohmann::json& trace, const std::string& source);

}  // namespace collsim
