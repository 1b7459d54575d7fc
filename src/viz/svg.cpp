#include "viz/svg.hpp"

#include <cmath>
#include <fmt/format.h>

namespace collsim::viz {

std::string esc(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double value) {
  if (!std::isfinite(value)) return "0";
  std::string text = fmt::format("{:.2f}", value);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  if (text == "-0") text = "0";
  return text;
}

TimeUnit time_unit_for(double max_seconds) {
  const double magnitude = std::fabs(max_seconds);
  if (magnitude >= 1) return {1, "s"};
  if (magnitude >= 1e-3) return {1e3, "ms"};
  if (magnitude >= 1e-6) return {1e6, "µs"};
  return {1e9, "ns"};
}

std::string short_time(double seconds) {
  if (seconds == 0) return "0 s";
  // The unit of the value as printed (0.9999999 us is "1 µs", not "1e+03 ns")
  const TimeUnit unit = time_unit_for(std::stod(fmt::format("{:.3g}", seconds)));
  return fmt::format("{:.3g} {}", seconds * unit.per_second, unit.name);
}

std::string thousands(uint64_t value) {
  std::string digits = std::to_string(value), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!(hi > lo) || target < 1) return {lo};
  const double raw = (hi - lo) / target;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * power;
    if (step >= raw) break;
  }
  if (!(step > 0) || !std::isfinite(step)) return {lo};
  const double first = std::ceil(lo / step - 1e-9) * step;
  // Bounded, and by index: where the step is below the values' spacing (1e20 and its next
  // double) `t += step` moved nothing and never ended.
  for (int i = 0; i < 4 * target + 8; ++i) {
    const double t = first + i * step;
    if (t > hi + step * 1e-9 || !std::isfinite(t) || (i > 0 && t == ticks.back())) break;
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

std::string tick_label(double seconds, TimeUnit unit, double spacing_seconds) {
  const double spacing = spacing_seconds * unit.per_second;
  int decimals = 0;
  while (decimals < 6 && std::fabs(spacing * std::pow(10.0, decimals) - std::round(spacing * std::pow(10.0, decimals))) > 1e-6)
    ++decimals;
  return fmt::format("{:.{}f}", seconds * unit.per_second, decimals);
}

std::vector<double> time_ticks(double end) { return nice_ticks(0, end, 10); }

std::string time_axis_svg(double x0, double width, double y, double end) {
  const TimeUnit unit = time_unit_for(end);
  const auto ticks = time_ticks(end);
  const double spacing = ticks.size() > 1 ? ticks[1] - ticks[0] : end;
  auto x = [&](double t) { return x0 + (end > 0 ? t / end : 0) * width; };
  std::string out = fmt::format(R"~(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#3b4450" stroke-width="1"/>)~",
                                num(x0), num(x0 + width), num(y));
  for (double tick : ticks) {
    out += fmt::format(R"~(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#3b4450" stroke-width="1"/>)~", num(x(tick)),
                       num(y), num(y + 5));
    out += fmt::format(R"~(<text x="{}" y="{}" font-size="11" fill="#3b4450" text-anchor="middle">{}</text>)~",
                       num(x(tick)), num(y + 18), tick_label(tick, unit, spacing));
  }
  out += fmt::format(R"~(<text x="{}" y="{}" font-size="11" fill="#3b4450" text-anchor="middle">simulated time ({})</text>)~",
                     num(x0 + width / 2), num(y + 34), unit.name);
  return out + "\n";
}

}  // namespace collsim::viz
