// What a sweep plot draws: from the command line (`sweep plot --y-scale linear --reference
// ...`) or from a sweep file's "plot" object.
#include <algorithm>
#include <fmt/format.h>

#include "run/metrics.hpp"
#include "sweep/plot.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"

using nlohmann::json;

namespace collsim {
namespace {

const std::vector<std::string> scales{"auto", "linear", "log"};
const std::vector<std::string> bounds{"lower_bound", "topology_bound", "none"};

void check_choice(const std::string& value, const std::vector<std::string>& allowed, const std::string& field) {
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
    throw InputError(fmt::format("{}: '{}' is not allowed{}; allowed: {}", field, value, did_you_mean(value, allowed),
                                 join(allowed)));
}

// A trace's summary figure: "run.json" (the y metric) or "run.json:baseline_time".
double figure_of_trace(const std::string& spec, const std::string& y, const std::string& field) {
  std::string path = spec, key = y;
  if (const size_t colon = spec.rfind(".json:"); colon != std::string::npos) {
    path = spec.substr(0, colon + 5);
    key = spec.substr(colon + 6);
  }
  json trace;
  try {
    trace = json::parse(read_input_file(path, field));
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: {} is not JSON ({})", field, path, e.what()));
  }
  if (!trace.is_object() || !trace.contains("summary") || !trace["summary"].contains(key) ||
      !trace["summary"][key].is_number())
    throw InputError(fmt::format("{}: {} has no summary.{} (a trace written by collsim run --trace has "
                                 "simulated_time, collective_time, baseline_time with --baseline, ...)",
                                 field, path, key));
  return trace["summary"][key].get<double>();
}

}  // namespace

PlotReference parse_plot_reference(const std::string& text, const std::string& y, const std::string& field) {
  const size_t equals = text.rfind('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size())
    throw InputError(fmt::format("{}: '{}' is not LABEL=VALUE; allowed: a value in the unit of {} (\"10GBps\", "
                                 "\"144.8ms\", \"3\") or a trace (\"out/run.json\", \"out/run.json:baseline_time\")",
                                 field, text, y));
  PlotReference reference{text.substr(0, equals), 0};
  const std::string value = text.substr(equals + 1);
  if (value.find(".json") != std::string::npos) {
    reference.value = figure_of_trace(value, y, field);
    return reference;
  }
  const Metric* metric = find_metric(y);
  const MetricUnit unit = metric ? metric->unit : MetricUnit::ratio;
  if (unit == MetricUnit::seconds) reference.value = parse_time(value, field);
  else if (unit == MetricUnit::bytes_per_second) reference.value = parse_bandwidth(value, field);
  else {
    try {
      size_t used = 0;
      reference.value = std::stod(value, &used);
      if (used != value.size()) throw std::invalid_argument(value);
    } catch (const std::exception&) {
      throw InputError(fmt::format("{}: '{}' is not a number", field, value));
    }
  }
  return reference;
}

void check_plot_spec(const PlotSpec& spec) {
  check_choice(spec.x_scale, scales, "--x-scale");
  check_choice(spec.y_scale, scales, "--y-scale");
  check_choice(spec.bound, bounds, "--bound");
}

PlotSpec plot_spec_from_json(const json& plot, PlotSpec spec) {
  if (plot.is_null()) return spec;
  if (!plot.is_object()) throw InputError("plot: must be an object (title, x, y, series, x_scale, y_scale, bound, references, ideal)");
  const std::vector<std::string> keys{"title", "x", "y", "series", "x_scale", "y_scale", "bound", "references", "ideal"};
  for (const auto& [key, value] : plot.items()) {
    const std::string field = "plot." + key;
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw InputError(fmt::format("{}: unknown key{}; allowed: {}", field, did_you_mean(key, keys), join(keys)));
    if (key == "ideal") {
      if (!value.is_boolean()) throw InputError(fmt::format("{}: must be true or false", field));
      spec.ideal = value.get<bool>();
      continue;
    }
    if (key == "references") continue;  // after y is known
    if (!value.is_string()) throw InputError(fmt::format("{}: must be a string", field));
    const std::string text = value.get<std::string>();
    if (key == "title") spec.title = text;
    if (key == "x") spec.x = text;
    if (key == "y") spec.y = text;
    if (key == "series") spec.series = text;
    if (key == "x_scale") check_choice(spec.x_scale = text, scales, field);
    if (key == "y_scale") check_choice(spec.y_scale = text, scales, field);
    if (key == "bound") check_choice(spec.bound = text, bounds, field);
  }
  if (plot.contains("references")) {
    if (!plot["references"].is_array()) throw InputError("plot.references: must be a list of \"LABEL=VALUE\"");
    for (const auto& reference : plot["references"]) {
      if (!reference.is_string()) throw InputError("plot.references: must be a list of \"LABEL=VALUE\"");
      spec.references.push_back(parse_plot_reference(reference.get<std::string>(), spec.y, "plot.references"));
    }
  }
  return spec;
}

}  // namespace collsim
