#pragma once
// The metrics of a run, each declared once: its name, unit, which way is better, how it
// is computed and what it means. Baselines, sweep tables, `compare` and
// `collsim list metrics` all take them from this table, and the docs' lists are checked
// against it (tests/cli/test_metrics.py), so a metric cannot be missing from one of them.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "run/summary.hpp"

namespace collsim {

enum class Better { lower, higher, informational };  // informational: shown, never compared
enum class MetricUnit { seconds, bytes_per_second, count, ratio, flag };

struct Metric {
  const char* name;
  MetricUnit unit;
  Better better;
  const char* description;
  // The value of one run (a number or a boolean), or null when the run has none.
  nlohmann::json (*value)(const RunSummary& summary, const SimResult& result);
  // Only a run with --baseline has it (sweep points never do: no column for it).
  bool needs_baseline = false;
};

// In the order of the sweep table's columns.
const std::vector<Metric>& metric_table();

// nullptr when `name` is not a metric.
const Metric* find_metric(std::string_view name);

// The metrics `compare` compares (better is lower or higher), by name.
std::vector<std::string> compared_metric_names();

// Every metric of a run that has a value, by name.
nlohmann::json metric_values(const RunSummary& summary, const SimResult& result);

// A metric's value as people read it ("11.7721 ms", "9.976 GB/s", "yes").
std::string format_metric_value(const Metric& metric, double value);

std::string_view better_name(Better better);
std::string_view metric_unit_name(MetricUnit unit);

}  // namespace collsim
