#include "sweep/show.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "run/metrics.hpp"
#include "sweep/plot_scale.hpp"
#include "util/errors.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"

using nlohmann::json;

namespace collsim {
namespace {

// The metrics a reader looks at first, in this order; each shown when some row has it.
const std::vector<std::string> usual_metrics{"simulated_time", "collective_time", "model_time", "efficiency",
                                             "busbw", "iteration_time", "exposed_comm", "overlap_fraction",
                                             "samples_per_second", "rounds_completed", "stalled", "verified",
                                             "healthy_dropped"};

std::string cell_of(const std::string& column, const json& value) {
  if (value.is_null()) return "-";
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  if (value.is_string()) return value.get<std::string>();
  const double number = value.get<double>();
  if (const Metric* metric = find_metric(column)) {
    if (metric->unit == MetricUnit::ratio) return fmt::format("{:.1f}%", 100 * number);
    if (column == "samples_per_second") return fmt::format("{:.6g} samples/s", number);
    if (column == "memory_per_worker") return format_size(number);
    if (metric->unit == MetricUnit::count) return fmt::format("{:.6g}", number);
    return format_metric_value(*metric, number);
  }
  return human_value(column, number);
}

// Whether a metric says something in this table: some row has it, and the flags and
// counts that only matter when they are off (stalled, not verified, several rounds) are.
bool worth_showing(const std::string& metric, const std::vector<ResultRow>& rows) {
  auto any = [&](auto test) {
    return std::any_of(rows.begin(), rows.end(), [&](const ResultRow& r) {
      return r.metrics.contains(metric) && !r.metrics[metric].is_null() && test(r.metrics[metric], r);
    });
  };
  if (metric == "stalled") return any([](const json& v, const ResultRow&) { return v == true; });
  if (metric == "verified") return any([](const json& v, const ResultRow&) { return v == false; });
  if (metric == "rounds_completed") return any([](const json& v, const ResultRow&) { return v != 1; });
  if (metric == "collective_time")
    return any([](const json& v, const ResultRow& r) { return r.metrics.value("simulated_time", json()) != v; });
  return any([](const json&, const ResultRow&) { return true; });
}

std::vector<std::string> chosen_metrics(const std::vector<ResultRow>& rows, const ShowSpec& spec) {
  if (spec.metrics.empty()) {
    std::vector<std::string> out;
    for (const auto& metric : usual_metrics)
      if (worth_showing(metric, rows)) out.push_back(metric);
    return out;
  }
  const std::vector<std::string>& known = result_metric_columns();
  for (const auto& metric : spec.metrics)
    if (std::find(known.begin(), known.end(), metric) == known.end())
      throw InputError(fmt::format("--metrics: '{}' is not a metric{}; allowed: {}", metric, did_you_mean(metric, known),
                                   join(known)));
  return spec.metrics;
}

json value_of(const ResultRow& row, const std::string& column) {
  for (const auto& [name, value] : row.axes)
    if (name == column) return value;
  return row.metrics.contains(column) ? row.metrics[column] : json();
}

std::string header_of(const std::string& column) {
  if (column == "simulated_time") return "simulated time";
  if (column == "collective_time") return "collective time";
  if (column == "model_time") return "model";
  if (column == "samples_per_second") return "throughput";
  std::string header = column;
  std::replace(header.begin(), header.end(), '_', ' ');
  return header;
}

}  // namespace

std::string show_results(const std::vector<ResultRow>& given, const ShowSpec& spec) {
  std::vector<ResultRow> rows(given);
  std::vector<std::string> axes;
  for (const auto& row : rows)
    for (const auto& [name, value] : row.axes)
      if (std::find(axes.begin(), axes.end(), name) == axes.end()) axes.push_back(name);
  const std::vector<std::string> metrics = chosen_metrics(rows, spec);
  if (!spec.sort.empty()) {
    std::vector<std::string> columns(axes);
    columns.insert(columns.end(), metrics.begin(), metrics.end());
    if (std::find(columns.begin(), columns.end(), spec.sort) == columns.end())
      throw InputError(fmt::format("--sort: '{}' is not a column shown{}; allowed: {}", spec.sort,
                                   did_you_mean(spec.sort, columns), join(columns)));
    std::stable_sort(rows.begin(), rows.end(), [&](const ResultRow& a, const ResultRow& b) {
      const json va = value_of(a, spec.sort), vb = value_of(b, spec.sort);
      return va.is_number() && vb.is_number() ? va.get<double>() < vb.get<double>() : va.dump() < vb.dump();
    });
  }
  const bool any_failed = std::any_of(rows.begin(), rows.end(), [](const ResultRow& r) { return r.status != "ok"; });
  std::vector<std::string> headers{"point"};
  headers.insert(headers.end(), axes.begin(), axes.end());
  if (any_failed) headers.push_back("status");
  for (const auto& metric : metrics) headers.push_back(header_of(metric));
  std::vector<std::vector<std::string>> table{headers};
  for (const auto& row : rows) {
    std::vector<std::string> cells{std::to_string(row.point)};
    for (const auto& axis : axes) cells.push_back(cell_of(axis, value_of(row, axis)));
    if (any_failed) cells.push_back(row.status);
    for (const auto& metric : metrics) cells.push_back(has_metrics(row) ? cell_of(metric, value_of(row, metric)) : "");
    table.push_back(cells);
  }
  std::vector<size_t> widths(headers.size(), 0);
  for (const auto& line : table)
    for (size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
  std::string out;
  for (const auto& line : table) {
    std::string text;
    for (size_t i = 0; i < line.size(); ++i) text += fmt::format("{}{:>{}}", i ? "  " : "", line[i], widths[i]);
    out += text + "\n";
  }
  for (const auto& row : rows)
    if (row.status != "ok") out += fmt::format("point {} {}: {}\n", row.point, row.status, row.error);
  const bool both = std::find(metrics.begin(), metrics.end(), "collective_time") != metrics.end();
  if (both || std::find(metrics.begin(), metrics.end(), "simulated_time") != metrics.end())
    out += both ? "simulated time: the whole run, every round; collective time: one collective, the mean over the rounds\n"
                : "simulated time: the whole run (here one collective)\n";
  return out;
}

}  // namespace collsim
