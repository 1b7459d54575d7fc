#include "sweep/sweep_spec.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <fmt/format.h>

#include "scenario/scenario.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"

using nlohmann::json;

namespace collsim {
namespace {

// A number, or a unit string read as a size or a time; returns the unit kind too.
std::pair<double, std::string> read_quantity(const json& value, const std::string& field) {
  if (value.is_number()) return {value.get<double>(), "number"};
  if (!value.is_string())
    throw InputError(fmt::format("{}: must be a number or a string with a unit, got {}", field, value.dump()));
  const std::string text = value.get<std::string>();
  try {
    return {parse_size(text, field), "size"};
  } catch (const InputError&) {
  }
  try {
    return {parse_time(text, field), "time"};
  } catch (const InputError&) {
  }
  throw InputError(fmt::format("{}: '{}' is not a number, a size (\"64MiB\") or a time (\"20ms\")", field, text));
}

json quantity_value(double value, const std::string& kind) {
  if (kind == "size" || (kind == "number" && value == std::floor(value) && std::fabs(value) < 9e15))
    return static_cast<long long>(std::llround(value));
  return value;
}

// A range stops at max_axis_values instead of being cut there without a word.
constexpr size_t max_axis_values = 100000;

void add_range_value(std::vector<json>& values, double value, const std::string& kind, const std::string& field) {
  if (values.size() == max_axis_values)
    throw InputError(fmt::format("{}: the range has more than {} values; a sweep runs at most {} points", field,
                                 max_axis_values, max_sweep_points));
  values.push_back(quantity_value(value, kind));
}

std::vector<json> axis_values(const json& spec, const std::string& field) {
  if (spec.is_array()) {
    if (spec.empty()) throw InputError(fmt::format("{}: the list of values is empty", field));
    // A list of sizes or times ("1MiB", "64MiB") is written as bytes or seconds, as a range
    // is, so that the results table has one form and the axis can be plotted.
    std::vector<json> values;
    std::string common_kind;
    for (const json& value : spec) {
      if (!value.is_string()) return {spec.begin(), spec.end()};
      std::pair<double, std::string> quantity;
      try {
        quantity = read_quantity(value, field);
      } catch (const InputError&) {
        return {spec.begin(), spec.end()};  // names, "3x": kept as written
      }
      if (quantity.second == "number" || (!common_kind.empty() && quantity.second != common_kind))
        return {spec.begin(), spec.end()};
      common_kind = quantity.second;
      values.push_back(quantity_value(quantity.first, quantity.second));
    }
    return values;
  }
  if (spec.is_object()) return expand_range(spec, field);
  throw InputError(fmt::format("{}: must be a list of values or a range such as {{\"from\": 2, \"to\": 64, \"times\": 2}}",
                               field));
}

}  // namespace

std::vector<json> expand_range(const json& range, const std::string& field) {
  for (const auto& [key, value] : range.items())
    if (key != "from" && key != "to" && key != "times" && key != "step")
      throw InputError(fmt::format("{}.{}: unknown key{}; allowed: from, to, times, step", field, key,
                                   did_you_mean(key, {"from", "to", "times", "step"})));
  if (!range.contains("from") || !range.contains("to") || range.contains("times") == range.contains("step"))
    throw InputError(fmt::format("{}: a range needs \"from\", \"to\" and one of \"times\" (geometric) or \"step\" (linear)",
                                 field));
  const auto [from, kind] = read_quantity(range["from"], field + ".from");
  const auto [to, to_kind] = read_quantity(range["to"], field + ".to");
  if (kind != to_kind) throw InputError(fmt::format("{}: \"from\" and \"to\" must have the same kind of unit", field));
  std::vector<json> values;
  if (range.contains("times")) {
    if (!range["times"].is_number() || range["times"].get<double>() <= 1)
      throw InputError(fmt::format("{}.times: must be a number > 1", field));
    if (from <= 0) throw InputError(fmt::format("{}.from: a geometric range starts above 0", field));
    const double times = range["times"].get<double>();
    for (double v = from; v <= to * (1 + 1e-12); v *= times) add_range_value(values, v, kind, field);
  } else {
    const auto [step, step_kind] = read_quantity(range["step"], field + ".step");
    if (step <= 0) throw InputError(fmt::format("{}.step: must be > 0", field));
    for (double v = from; v <= to * (1 + 1e-12) + 1e-15; v += step) {
      // a step too small to move `v` (5e-324 from 1) would give the same value for ever
      if (v + step == v) throw InputError(fmt::format("{}.step: {} is too small to move from {}", field, step, v));
      add_range_value(values, v, kind, field);
    }
  }
  if (values.empty()) throw InputError(fmt::format("{}: the range from {} to {} is empty", field, from, to));
  return values;
}

std::vector<std::string> Sweep::columns() const {
  std::vector<std::string> names;
  for (const auto& axis : axes) names.insert(names.end(), axis.paths.begin(), axis.paths.end());
  return names;
}

Sweep parse_sweep(const nlohmann::ordered_json& document, const std::string& source_dir) {
  if (!document.is_object()) throw InputError("sweep: must be a JSON object with \"base\" and \"axes\"");
  const std::vector<std::string> keys{"name", "description", "base", "axes", "zip", "plot"};
  for (const auto& [key, value] : document.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw InputError(fmt::format("{}: unknown key{}; allowed: {}", key, did_you_mean(key, keys), join(keys)));
  Sweep sweep;
  if (document.contains("name") && (!document["name"].is_string() || document["name"].get<std::string>().empty()))
    throw InputError(fmt::format("name: must be a non-empty string, got {}", document["name"].dump()));
  sweep.name = document.value("name", "sweep");
  if (document.contains("plot")) sweep.plot = json::parse(document["plot"].dump());
  sweep.source_dir = source_dir;
  if (!document.contains("base")) throw InputError("base: missing; give a scenario (an object) or its path");
  if (document["base"].is_string()) {
    namespace fs = std::filesystem;
    fs::path path(document["base"].get<std::string>());
    if (path.is_relative() && !fs::exists(path) && !source_dir.empty()) path = fs::path(source_dir) / path;
    sweep.base = load_scenario_json(path.string());
    sweep.source_dir = path.parent_path().string();
  } else if (document["base"].is_object()) {
    sweep.base = json::parse(document["base"].dump());
  } else {
    throw InputError("base: must be a scenario object or the path of a scenario file");
  }
  if (document.contains("axes")) {
    if (!document["axes"].is_object()) throw InputError("axes: must be an object of \"field.path\": values");
    for (const auto& [path, spec] : document["axes"].items()) {
      SweepAxis axis{{path}, {}};
      for (json& value : axis_values(json::parse(spec.dump()), "axes." + path)) axis.values.push_back({value});
      sweep.axes.push_back(axis);
    }
  }
  if (document.contains("zip")) {
    if (!document["zip"].is_array()) throw InputError("zip: must be a list of groups, each {\"path\": [values], ...}");
    for (size_t g = 0; g < document["zip"].size(); ++g) {
      const json group = json::parse(document["zip"][g].dump());
      const auto& ordered_group = document["zip"][g];
      const std::string where = fmt::format("zip.{}", g);
      if (!group.is_object() || group.size() < 2)
        throw InputError(fmt::format("{}: a zip group is an object of at least two \"path\": [values]", where));
      SweepAxis axis;
      for (const auto& [path, ordered_spec] : ordered_group.items()) {
        const auto values = axis_values(json::parse(ordered_spec.dump()), where + "." + path);
        if (!axis.paths.empty() && values.size() != axis.values.size())
          throw InputError(fmt::format("{}: '{}' has {} values where '{}' has {}: zipped lists must have the same length",
                                       where, path, values.size(), axis.paths.front(), axis.values.size()));
        if (axis.values.empty()) axis.values.resize(values.size());
        axis.paths.push_back(path);
        for (size_t i = 0; i < values.size(); ++i) axis.values[i].push_back(values[i]);
      }
      sweep.axes.push_back(axis);
    }
  }
  const auto columns = sweep.columns();
  for (size_t i = 0; i < columns.size(); ++i)
    for (size_t j = i + 1; j < columns.size(); ++j)
      if (columns[i] == columns[j]) throw InputError(fmt::format("axes: '{}' is swept twice", columns[i]));
  return sweep;
}

bool is_sweep_file(const std::string& path) { return std::filesystem::path(path).parent_path().filename() == "sweeps"; }

Sweep load_sweep(const std::string& path) {
  // Read through the scenario loader for its error messages, then again keeping key order.
  return parse_sweep(parse_ordered_json(read_input_file(path, "sweep file"), path),
                     std::filesystem::path(path).parent_path().string());
}

std::string describe_point(const SweepPoint& point) {
  std::vector<std::string> parts;
  for (const auto& [path, value] : point.settings)
    parts.push_back(path + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
  return join(parts, ", ");
}

std::vector<SweepPoint> expand_sweep(const Sweep& sweep) {
  // counted in floating point: four axes of 65536 values overflow a size_t to 0 points
  double total_points = 1;
  for (const auto& axis : sweep.axes) total_points *= static_cast<double>(axis.values.size());
  if (total_points > static_cast<double>(max_sweep_points))
    throw InputError(fmt::format("axes: {:.4g} points is too many for one sweep; at most {}", total_points,
                                 max_sweep_points));
  const auto total = static_cast<size_t>(total_points);
  std::vector<SweepPoint> points;
  for (size_t index = 0; index < total; ++index) {
    SweepPoint point;
    point.index = static_cast<int>(index);
    point.scenario = sweep.base;
    size_t rest = index;
    // Mixed-radix counting with the last axis fastest.
    std::vector<size_t> choice(sweep.axes.size());
    for (size_t a = sweep.axes.size(); a-- > 0;) {
      choice[a] = rest % sweep.axes[a].values.size();
      rest /= sweep.axes[a].values.size();
    }
    for (size_t a = 0; a < sweep.axes.size(); ++a)
      for (size_t k = 0; k < sweep.axes[a].paths.size(); ++k) {
        const json& value = sweep.axes[a].values[choice[a]][k];
        point.settings.emplace_back(sweep.axes[a].paths[k], value);
        try {
          set_path(point.scenario, sweep.axes[a].paths[k], value);
        } catch (const InputError& error) {
          throw InputError(fmt::format("point {} ({}): {}", index, describe_point(point), error.what()));
        }
      }
    try {
      parse_scenario(point.scenario, sweep.source_dir);
    } catch (const InputError& error) {
      throw InputError(fmt::format("point {} ({}): {}", index, describe_point(point), error.what()));
    }
    points.push_back(std::move(point));
  }
  return points;
}

}  // namespace collsim
