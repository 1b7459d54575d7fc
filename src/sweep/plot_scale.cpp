#include "sweep/plot_scale.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <fmt/format.h>

#include "util/units.hpp"

namespace collsim {

double Scale::at(double value) const {
  const double t = log ? (std::log10(value) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (value / 2 - lo / 2) / (hi / 2 - lo / 2);
  return pixel_lo + t * (pixel_hi - pixel_lo);
}

namespace {

constexpr int max_ticks = 64;

// Round ticks of a log scale: every power of the base, and 2x and 5x between them when the
// axis spans less than two decades (so that a reader can read 1.69 ms against 1.94 ms).
// Every loop here is bounded by a count of steps: at the ends of the doubles (5e-324, 1e308)
// a product or a sum can stop moving, and a loop on its value never ended.
std::vector<double> log_ticks(double lo, double hi, bool bytes) {
  std::vector<double> out;
  const double base = bytes ? 16 : 10, unit = bytes ? 1024 : 1;
  double v = unit * std::pow(base, std::floor(std::log(lo / unit) / std::log(base)));
  for (int i = 0; i < max_ticks && v > 0 && std::isfinite(v) && v <= hi * 1.0001; ++i, v *= base)
    if (v >= lo * 0.9999) out.push_back(v);
  if (out.size() >= 3 || bytes) return out;
  out.clear();
  double decade = std::pow(10, std::floor(std::log10(lo)));
  for (int i = 0; i < max_ticks && decade > 0 && decade <= hi; ++i, decade *= 10)
    for (double m : {1.0, 2.0, 5.0})
      if (m * decade >= lo * 0.9999 && m * decade <= hi * 1.0001 && std::isfinite(m * decade)) out.push_back(m * decade);
  return out;
}

// About five round steps: sizes by a power of two bytes (2 MiB, 4 MiB, ...), other values
// by 2, 5 or 10 times a power of ten.
std::vector<double> linear_ticks(double lo, double hi, bool bytes) {
  std::vector<double> out;
  const double raw = (hi / 5 - lo / 5);
  if (!(raw > 0) || !std::isfinite(raw)) return {lo};
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  const double step = bytes ? std::max(1.0, std::exp2(std::ceil(std::log2(raw))))
                     : raw / magnitude < 2 ? 2 * magnitude : raw / magnitude < 5 ? 5 * magnitude : 10 * magnitude;
  if (!std::isfinite(step)) return {lo};
  const double first = std::ceil(lo / step) * step;
  for (int i = 0; i < max_ticks; ++i) {
    const double v = first + i * step;
    if (v > hi * (1 + 1e-9) || !std::isfinite(v) || (i > 0 && v == out.back())) break;
    out.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  }
  return out;
}

}  // namespace

Scale make_scale(std::vector<double> values, const std::vector<double>& data_ticks, double pixel_lo, double pixel_hi,
                 bool bytes, const std::string& mode) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }), values.end());
  double lo = values.empty() ? 0 : *std::min_element(values.begin(), values.end());
  double hi = values.empty() ? 1 : *std::max_element(values.begin(), values.end());
  Scale s;
  s.bytes = bytes;
  s.pixel_lo = pixel_lo;
  s.pixel_hi = pixel_hi;
  s.log = lo > 0 && (mode == "log" || (mode == "auto" && hi / lo > 20));
  if (s.log) {
    // A sixteenth of the span beyond the data on both ends: no line sits on the frame.
    // In decades, within the positive doubles (hi / lo overflows from 5e-324 to 1e308).
    const double span = std::max(std::log10(hi) - std::log10(lo), std::log10(1.0001));
    s.lo = std::max(std::pow(10, std::log10(lo) - span / 16), std::numeric_limits<double>::min());
    s.hi = std::min(std::pow(10, std::log10(hi) + span / 16), std::numeric_limits<double>::max());
    s.ticks = data_ticks.empty() ? log_ticks(s.lo, s.hi, bytes) : data_ticks;
    return s;
  }
  if (lo > 0 && lo < hi / 3) lo = 0;
  if (hi == lo) hi = lo + (lo == 0 ? 1 : std::fabs(lo));
  // halves first: hi - lo overflows from -1e308 to 1e308
  const double pad = (hi / 2 - lo / 2) * 0.12;
  s.hi = std::min(hi + pad, std::numeric_limits<double>::max());
  s.lo = lo == 0 ? 0 : std::max(lo - pad, std::numeric_limits<double>::lowest());
  s.ticks = data_ticks.empty() ? linear_ticks(s.lo, s.hi, bytes) : data_ticks;
  return s;
}

bool is_size_column(const std::string& column) {
  for (const char* word : {"size", "segment", "bucket", "memory", "buffer", "bytes"})
    if (column.find(word) != std::string::npos) return true;
  return false;
}

std::string human_value(const std::string& column, double value) {
  if (column.find("time") != std::string::npos || column.find("bound") != std::string::npos ||
      column.find("timeout") != std::string::npos || column == "exposed_comm" || column.find("latency") != std::string::npos ||
      column.find("compute") != std::string::npos || column.find(".at") != std::string::npos)
    return format_time(value);
  if (is_size_column(column)) return format_size(value);
  if (column.find("bw") != std::string::npos || column.find("bandwidth") != std::string::npos) return format_bandwidth(value);
  if (column.find("efficiency") != std::string::npos || column.find("fraction") != std::string::npos)
    return fmt::format("{:.3g}%", 100 * value);
  return fmt::format("{:g}", value);
}

std::string short_column_name(const std::string& column) {
  const size_t dot = column.rfind('.');
  return dot == std::string::npos ? column : column.substr(dot + 1);
}

std::string metric_title(const std::string& metric) {
  if (metric == "simulated_time") return "simulated time (whole run)";
  if (metric == "collective_time") return "collective time (one collective)";
  if (metric == "busbw") return "busbw (bus bandwidth)";
  if (metric == "algbw") return "algbw (algorithm bandwidth)";
  std::string title = metric;
  std::replace(title.begin(), title.end(), '_', ' ');
  return title;
}

}  // namespace collsim
