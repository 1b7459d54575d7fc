#include "sweep/results.hpp"

#include <algorithm>
#include <climits>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "run/metrics.hpp"
#include "util/atomic_file.hpp"
#include "util/csv.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"

using nlohmann::json;

namespace collsim {
namespace {

std::string csv_cell(const json& value) {
  return quote_csv_cell(value.is_string() ? value.get<std::string>() : value.is_null() ? "" : value.dump());
}

// A CSV cell back to JSON: numbers and booleans as such, the rest as strings.
json parse_cell(const std::string& text) {
  if (text.empty()) return nullptr;
  try {
    const json value = json::parse(text);
    if (value.is_number() || value.is_boolean()) return value;
  } catch (const json::exception&) {
  }
  return text;
}

}  // namespace

const std::vector<std::string>& result_metric_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> names;
    for (const Metric& metric : metric_table())
      if (!metric.needs_baseline) names.emplace_back(metric.name);
    return names;
  }();
  return columns;
}

bool is_result_bookkeeping_column(const std::string& name) {
  return name == "point" || name == "status" || name == "error" || name == "wall_time";
}

void write_results(const std::string& path, std::vector<ResultRow> rows, const std::vector<std::string>& axis_columns,
                   const std::string& field) {
  std::sort(rows.begin(), rows.end(), [](const ResultRow& a, const ResultRow& b) { return a.point < b.point; });
  const bool as_json = path.size() >= 5 && path.substr(path.size() - 5) == ".json";
  std::string text;
  if (as_json) {
    json table = json::array();
    for (const auto& row : rows) {
      json entry = json::object();
      entry["point"] = row.point;
      for (const auto& [name, value] : row.axes) entry[name] = value;
      entry["status"] = row.status;
      for (const auto& name : result_metric_columns())
        entry[name] = row.metrics.contains(name) ? row.metrics[name] : json(nullptr);
      entry["wall_time"] = row.wall_time;
      entry["error"] = row.error;
      table.push_back(entry);
    }
    text = table.dump(1) + "\n";
  } else {
    std::vector<std::string> header{"point"};
    header.insert(header.end(), axis_columns.begin(), axis_columns.end());
    header.push_back("status");
    header.insert(header.end(), result_metric_columns().begin(), result_metric_columns().end());
    header.push_back("wall_time");
    header.push_back("error");
    for (size_t i = 0; i < header.size(); ++i) text += (i ? "," : "") + header[i];
    text += "\n";
    for (const auto& row : rows) {
      std::vector<std::string> cells{std::to_string(row.point)};
      for (const auto& column : axis_columns) {
        const auto it = std::find_if(row.axes.begin(), row.axes.end(), [&](auto& a) { return a.first == column; });
        cells.push_back(it == row.axes.end() ? "" : csv_cell(it->second));
      }
      cells.push_back(row.status);
      for (const auto& name : result_metric_columns())
        cells.push_back(row.metrics.contains(name) ? csv_cell(row.metrics[name]) : "");
      cells.push_back(fmt::format("{:.3f}", row.wall_time));
      cells.push_back(csv_cell(row.error));
      for (size_t i = 0; i < cells.size(); ++i) text += (i ? "," : "") + cells[i];
      text += "\n";
    }
  }
  write_file_atomically(path, text, field);
}

namespace {

// A point's number as written: a whole number from 0 (4294967301 once read as 5, 3.7 as 3).
int point_number(const json& value, const std::string& path, const std::string& field) {
  if (value.is_number_integer() && value.get<int64_t>() >= 0 && value.get<int64_t>() <= INT_MAX &&
      !(value.is_number_unsigned() && value.get<uint64_t>() > INT_MAX))
    return value.get<int>();
  throw InputError(fmt::format("{}: '{}' has a row whose point number {} is not a whole number from 0 to {}", field,
                               path, value.dump(), INT_MAX));
}

}  // namespace

std::vector<ResultRow> read_results(const std::string& path, const std::string& field) {
  const std::string text = read_input_file(path, field + " results table");
  const auto& metrics = result_metric_columns();
  auto is_metric = [&](const std::string& name) { return std::find(metrics.begin(), metrics.end(), name) != metrics.end(); };
  std::vector<ResultRow> rows;
  auto add_row = [&](const std::vector<std::pair<std::string, json>>& cells) {
    ResultRow row;
    row.point = -1;
    for (const auto& [name, value] : cells) {
      if (name == "point") row.point = point_number(value, path, field);
      else if (name == "status") row.status = value.is_string() ? value.get<std::string>() : "ok";
      else if (name == "error") row.error = value.is_string() ? value.get<std::string>() : "";
      else if (name == "wall_time") row.wall_time = value.is_number() ? value.get<double>() : 0;
      else if (is_metric(name)) row.metrics[name] = value;
      else row.axes.emplace_back(name, value);
    }
    if (row.point < 0) throw InputError(fmt::format("{}: '{}' has a row without a point number", field, path));
    rows.push_back(row);
  };
  if (path.size() >= 5 && path.substr(path.size() - 5) == ".json") {
    const json table = parse_json(text, fmt::format("{}: '{}'", field, path));
    if (!table.is_array()) throw InputError(fmt::format("{}: '{}' is not a list of result rows", field, path));
    for (const json& entry : table) {
      std::vector<std::pair<std::string, json>> cells;
      for (const auto& [name, value] : entry.items()) cells.emplace_back(name, value);
      add_row(cells);
    }
    return rows;
  }
  // what a sweep writes starts with its point column: anything else is another file
  if (text.compare(0, 6, "point,") != 0 && text.compare(0, 6, "point\n") != 0)
    throw InputError(fmt::format("{}: '{}' is not a results table (its header does not start with 'point'); "
                                 "give the table a sweep wrote, or another --out",
                                 field, path));
  for (const CsvRow& cells : parse_csv_table(text, path, field)) {
    std::vector<std::pair<std::string, json>> row;
    for (const auto& [name, cell] : cells)
      row.emplace_back(name, name == "error" || name == "status" ? json(cell) : parse_cell(cell));
    add_row(row);
  }
  return rows;
}

}  // namespace collsim
