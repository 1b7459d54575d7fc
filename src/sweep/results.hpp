#pragma once
// Sweep results: one row per point with every axis value and the run's figures, as a tidy
// CSV or JSON table (docs/sweeps.md). Rewritten whole and atomically after every point.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace collsim {

struct ResultRow {
  int point = 0;
  std::vector<std::pair<std::string, nlohmann::json>> axes;  // path -> value
  // "ok"; "stalled" or "unverified": the point ran, its metrics are kept, and it counts as
  // failed (the sweep exits 1, as its run alone would); "failed": it did not run
  std::string status = "ok";
  std::string error;
  nlohmann::json metrics = nlohmann::json::object();         // simulated_time, ...
  double wall_time = 0;                                      // seconds of real time
};

// Whether the point ran to its end (its metrics are there), whatever its status.
inline bool has_metrics(const ResultRow& row) { return row.status != "failed"; }

// The metric columns, in table order: every metric of run/metrics.hpp that a sweep point has.
const std::vector<std::string>& result_metric_columns();

// Columns every row has besides its axes and metrics: point, status, error, wall_time.
bool is_result_bookkeeping_column(const std::string& name);

// Writes `rows` (sorted by point) to `path`: CSV unless it ends in ".json".
void write_results(const std::string& path, std::vector<ResultRow> rows, const std::vector<std::string>& axis_columns,
                   const std::string& field);

// Reads a results table written by write_results (for --resume and `sweep merge`).
std::vector<ResultRow> read_results(const std::string& path, const std::string& field);

}  // namespace collsim
