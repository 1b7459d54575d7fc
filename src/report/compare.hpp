#pragma once
// `collsim compare`: simulated times are deterministic, so a change in them is a change in
// collsim, a scenario or a platform. Compares the runs of a baseline with those of a current
// set (traces, baseline files, result tables, or folders of them), matched by identity.
#include <map>
#include <string>
#include <vector>

namespace collsim {

// One run or sweep point: its identity (scenario name, or a result row's axis values) and
// its metrics.
struct MetricSet {
  std::string identity;
  std::string source;                      // file it came from
  std::map<std::string, double> metrics;   // verified and stalled as 1/0
};

// Reads a trace, a baseline file, a results table (.csv, or .json list of rows), or every
// such file under a folder. Throws InputError naming `field` for unreadable input.
std::vector<MetricSet> load_metric_sets(const std::string& path, const std::string& field);

enum class Change { unchanged, regression, improvement, missing, added };

struct Comparison {
  Change change = Change::unchanged;
  std::string identity;
  std::string metric;        // empty for missing / added entries
  double baseline = 0, current = 0;
  double relative = 0;       // (current - baseline) / |baseline|
  double tolerance = 0;
};

struct CompareOptions {
  double tolerance = 0.005;                  // relative, for every metric unless overridden
  std::map<std::string, double> per_metric;  // metric -> relative tolerance
};

// Parses "0.5%", "0.005", or "METRIC=0.5%" into the options (InputError otherwise).
void parse_tolerance(const std::string& text, CompareOptions& options);

std::vector<Comparison> compare_metric_sets(const std::vector<MetricSet>& baseline, const std::vector<MetricSet>& current,
                                            const CompareOptions& options);

// "text" (aligned table), "markdown" (a table for a CI comment) or "json".
std::string format_comparison(const std::vector<Comparison>& rows, const std::string& format);

// 1 when anything regressed or went missing (with `strict`, when anything changed at
// all, improvements and new entries included), else 0.
int comparison_exit_status(const std::vector<Comparison>& rows, bool strict = false);

}  // namespace collsim
