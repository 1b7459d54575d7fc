#include "report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <sstream>

#include "report/parallel_compare.hpp"
#include "run/metrics.hpp"
#include "sweep/results.hpp"
#include "util/csv.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"
#include "viz/trace_view.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace collsim {
namespace {

// The metric compared under this name (run/metrics.hpp), or nullptr.
const Metric* compared_metric(const std::string& name) {
  const Metric* metric = find_metric(name);
  if (metric == nullptr) return parallel_metric(name);
  return metric->better != Better::informational ? metric : nullptr;
}

std::string read_text(const fs::path& path, const std::string& field) {
  return read_input_file(path.string(), field + " file");
}

// A compared metric that is there must be a number or a boolean (null: not measured):
// "nan" or {} skipped without a word would hide a regression.
void take_metrics(const json& object, MetricSet& set) {
  if (!object.is_object())
    throw InputError(fmt::format("{}: entry {}: the metrics are {}, not an object", set.source, set.identity,
                                 object.dump()));
  for (const std::string& name : compared_metric_names()) {
    if (!object.contains(name) || object[name].is_null()) continue;
    const json& value = object[name];
    if (value.is_boolean()) set.metrics[name] = value.get<bool>() ? 1 : 0;
    else if (value.is_number()) set.metrics[name] = value.get<double>();
    else
      throw InputError(fmt::format("{}: entry {}: {} is {}, not a number", set.source, set.identity, name,
                                   value.dump()));
  }
}

// A result row's identity: its axis columns, in column order (not the metrics, nor what
// the sweep adds to every row: its point number, status, error and wall time).
std::string row_identity(const std::vector<std::pair<std::string, std::string>>& columns) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : columns)
    if (find_metric(name) == nullptr && !is_result_bookkeeping_column(name)) parts.push_back(name + "=" + value);
  return join(parts, ", ");
}

std::vector<MetricSet> from_json(const json& document, const std::string& source, const std::string& field) {
  std::vector<MetricSet> sets;
  const std::string format = document.is_object() ? document.value("format", "") : "";
  if (format.rfind("collsim-trace/", 0) == 0 && document.contains("parallel")) {
    sets.push_back(parallel_metric_set(document, source));
  } else if (format.rfind("collsim-trace/", 0) == 0) {
    // Traces are read by the one trace reader that the pictures use too.
    const viz::TraceView trace = viz::read_trace(document, source);
    MetricSet set{trace.name, source, {}};
    take_metrics(trace.summary, set);
    set.metrics["stalled"] = trace.stalled.empty() ? 0 : 1;
    sets.push_back(set);
  } else if (format == "collsim-baseline/1") {
    for (const char* key : {"identity", "metrics"})
      if (!document.contains(key))
        throw InputError(fmt::format("{}: '{}' is a baseline without \"{}\"", field, source, key));
    if (!document["identity"].is_string() || document["identity"].get<std::string>().empty())
      throw InputError(fmt::format("{}: '{}': identity is {}, not a name", field, source, document["identity"].dump()));
    MetricSet set{document["identity"].get<std::string>(), source, {}};
    take_metrics(document["metrics"], set);
    sets.push_back(set);
  } else if (document.is_array()) {
    for (const json& row : document) {
      if (!row.is_object()) throw InputError(fmt::format("{}: '{}' is a list whose entries are not objects", field, source));
      std::vector<std::pair<std::string, std::string>> columns;
      for (const auto& [name, value] : row.items())
        columns.emplace_back(name, value.is_string() ? value.get<std::string>() : value.dump());
      MetricSet set{row_identity(columns), source, {}};
      take_metrics(row, set);
      sets.push_back(set);
    }
  } else {
    throw InputError(fmt::format("{}: '{}' is not a collsim trace, baseline or results list", field, source));
  }
  return sets;
}

std::vector<MetricSet> from_csv(const std::string& text, const std::string& source, const std::string& field) {
  if (text.empty()) throw InputError(fmt::format("{}: '{}' is empty", field, source));
  std::vector<MetricSet> sets;
  for (const CsvRow& columns : parse_csv_table(text, source, field)) {
    MetricSet set{row_identity(columns), source, {}};
    for (const auto& [name, value] : columns) {
      if (compared_metric(name) == nullptr || value.empty()) continue;
      if (value == "true" || value == "false") {
        set.metrics[name] = value == "true" ? 1 : 0;
        continue;
      }
      // the whole cell, a finite number: "nan" would compare equal to anything
      char* end = nullptr;
      const double number = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end != '\0' || !std::isfinite(number) ||
          value.find_first_not_of("0123456789.eE+-") != std::string::npos)
        throw InputError(fmt::format("{}: '{}' entry {}: {} '{}' is not a finite number", field, source,
                                     set.identity, name, value));
      set.metrics[name] = number;
    }
    sets.push_back(set);
  }
  return sets;
}

std::vector<MetricSet> load_file(const fs::path& path, const std::string& field) {
  const std::string text = read_text(path, field);
  if (path.extension() == ".csv") return from_csv(text, path.string(), field);
  try {
    return from_json(parse_json(text, fmt::format("{}: '{}'", field, path.string())), path.string(), field);
  } catch (const json::exception& error) {
    throw InputError(fmt::format("{}: '{}' is not a collsim trace, baseline or results list: {}", field, path.string(),
                                 error.what()));
  }
}

std::string format_value(const std::string& metric, double value) {
  return format_metric_value(*compared_metric(metric), value);
}

const char* change_name(Change change) {
  switch (change) {
    case Change::unchanged: return "unchanged";
    case Change::regression: return "regression";
    case Change::improvement: return "improvement";
    case Change::missing: return "missing";
    case Change::added: return "new";
  }
  return "";
}

}  // namespace

std::vector<MetricSet> load_metric_sets(const std::string& path, const std::string& field) {
  const fs::path root(path);
  if (!fs::exists(root)) throw InputError(fmt::format("{}: '{}' does not exist", field, path));
  std::vector<MetricSet> sets;
  if (fs::is_directory(root)) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(root))
      if (entry.is_regular_file() && (entry.path().extension() == ".json" || entry.path().extension() == ".csv"))
        files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files)
      for (auto& set : load_file(file, field)) sets.push_back(std::move(set));
  } else {
    sets = load_file(root, field);
  }
  // Two runs of one identity would make the comparison ambiguous: refused, naming both.
  std::map<std::string, std::string> seen;
  for (const auto& set : sets)
    if (const auto [it, added] = seen.try_emplace(set.identity, set.source); !added)
      throw InputError(fmt::format("{}: '{}' appears twice (in {} and in {}): identities must be unique (give the "
                                   "scenarios different names)",
                                   field, set.identity, it->second, set.source));
  return sets;
}

void parse_tolerance(const std::string& text, CompareOptions& options) {
  std::string metric, value = text;
  if (const auto equals = text.find('='); equals != std::string::npos) {
    metric = text.substr(0, equals);
    value = text.substr(equals + 1);
    if (compared_metric(metric) == nullptr)
      throw InputError(fmt::format("--tolerance: unknown metric '{}'{}; allowed: {}", metric,
                                   did_you_mean(metric, compared_metric_names()),
                                   join(compared_metric_names()) + ", " + join(parallel_metric_names())));
  }
  const bool percent = !value.empty() && value.back() == '%';
  const std::string number = percent ? value.substr(0, value.size() - 1) : value;
  char* end = nullptr;
  double tolerance = std::strtod(number.c_str(), &end);
  // plain decimals only: strtod would also take "nan", "inf" and hexadecimal
  const bool decimal = number.find_first_not_of("0123456789.eE+-") == std::string::npos;
  if (number.empty() || *end != '\0' || !decimal || !std::isfinite(tolerance) || tolerance < 0)
    throw InputError(fmt::format("--tolerance: '{}' is not a tolerance such as 0.5%, 0.005 or simulated_time=0.1% "
                                 "(a finite number >= 0)", text));
  if (!percent && tolerance > 1)
    throw InputError(fmt::format("--tolerance: '{}' is ambiguous: a bare number is a fraction (0.05 = 5%); write "
                                 "{}% for {} percent", text, number, number));
  if (percent) tolerance /= 100;
  if (metric.empty()) options.tolerance = tolerance;
  else options.per_metric[metric] = tolerance;
}

std::vector<Comparison> compare_metric_sets(const std::vector<MetricSet>& baseline, const std::vector<MetricSet>& current,
                                            const CompareOptions& options) {
  std::map<std::string, const MetricSet*> now;
  for (const auto& set : current) now[set.identity] = &set;
  std::vector<Comparison> rows;
  std::set<std::string> matched;
  for (const auto& before : baseline) {
    const auto it = now.find(before.identity);
    if (it == now.end()) {
      rows.push_back({Change::missing, before.identity, "", 0, 0, 0, 0});
      continue;
    }
    matched.insert(before.identity);
    for (const auto& [metric, base] : before.metrics) {
      const auto value = it->second->metrics.find(metric);
      if (value == it->second->metrics.end()) continue;
      Comparison row{Change::unchanged, before.identity, metric, base, value->second, 0, options.tolerance};
      if (auto override = options.per_metric.find(metric); override != options.per_metric.end())
        row.tolerance = override->second;
      const double difference = row.current - row.baseline;
      // Relative change; against a zero baseline the change itself is compared.
      row.relative = row.baseline != 0 ? difference / std::fabs(row.baseline) : difference;
      if (std::fabs(row.relative) > row.tolerance) {
        const bool better = compared_metric(metric)->better == Better::lower ? difference < 0 : difference > 0;
        row.change = better ? Change::improvement : Change::regression;
      }
      rows.push_back(row);
    }
  }
  for (const auto& set : current)
    if (!matched.count(set.identity)) rows.push_back({Change::added, set.identity, "", 0, 0, 0, 0});
  return rows;
}

int comparison_exit_status(const std::vector<Comparison>& rows, bool strict) {
  return std::any_of(rows.begin(), rows.end(), [strict](const Comparison& row) {
    return row.change == Change::regression || row.change == Change::missing ||
           (strict && row.change != Change::unchanged);
  }) ? 1 : 0;
}

std::string format_comparison(const std::vector<Comparison>& rows, const std::string& format) {
  std::map<Change, int> counts;
  std::set<std::string> compared;  // entries present on both sides
  for (const auto& row : rows) {
    if (row.change != Change::unchanged) ++counts[row.change];
    if (!row.metric.empty()) compared.insert(row.identity);
  }
  const std::string summary =
      fmt::format("{} regression(s), {} improvement(s), {} missing, {} new; {} entries compared",
                  counts[Change::regression], counts[Change::improvement], counts[Change::missing], counts[Change::added],
                  compared.size());

  if (format == "json") {
    json out{{"summary", {{"regressions", counts[Change::regression]}, {"improvements", counts[Change::improvement]},
                          {"missing", counts[Change::missing]}, {"new", counts[Change::added]}}},
             {"changes", json::array()}};
    for (const auto& row : rows) {
      if (row.change == Change::unchanged) continue;
      json entry{{"status", change_name(row.change)}, {"identity", row.identity}};
      if (!row.metric.empty())
        entry.update({{"metric", row.metric}, {"baseline", row.baseline}, {"current", row.current},
                      {"relative_change", row.relative}, {"tolerance", row.tolerance}});
      out["changes"].push_back(entry);
    }
    return out.dump(2) + "\n";
  }

  std::vector<std::vector<std::string>> table;
  for (const auto& row : rows) {
    if (row.change == Change::unchanged) continue;
    if (row.metric.empty()) {
      table.push_back({change_name(row.change), row.identity, "", "", "", ""});
      continue;
    }
    table.push_back({change_name(row.change), row.identity, row.metric, format_value(row.metric, row.baseline),
                     format_value(row.metric, row.current), fmt::format("{:+.3f}%", 100 * row.relative)});
  }
  const std::vector<std::string> header{"STATUS", "ENTRY", "METRIC", "BASELINE", "CURRENT", "CHANGE"};
  std::string out;
  if (format == "markdown") {
    out += "| " + join({"status", "entry", "metric", "baseline", "current", "change"}, " | ") + " |\n";
    out += "|---|---|---|---:|---:|---:|\n";
    for (const auto& cells : table) out += "| " + join(cells, " | ") + " |\n";
    return out + "\n" + summary + "\n";
  }
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& cells : table) width[c] = std::max(width[c], cells[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t c = 0; c < cells.size(); ++c) text += fmt::format("{:<{}}  ", cells[c], width[c]);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text + "\n";
  };
  if (!table.empty()) {
    out += line(header);
    for (const auto& cells : table) out += line(cells);
  }
  return out + summary + "\n";
}

}  // namespace collsim
