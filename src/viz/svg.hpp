#pragma once
// Small helpers shared by the pictures: XML escaping, compact numbers for coordinates,
// time and size labels for people, and "nice" axis ticks.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::viz {

// Text safe inside an XML element or attribute.
std::string esc(std::string_view text);

// A coordinate with at most two decimals and no trailing zeros: "12.5", "3".
std::string num(double value);

// The unit that shows times up to `max_seconds` best: {1e3, "ms"} for 11.8 ms.
struct TimeUnit {
  double per_second = 1;  // multiply seconds by this
  const char* name = "s";
};
TimeUnit time_unit_for(double max_seconds);

// Three significant digits and a unit, for labels: "11.8 ms", "2.1 µs", "0 s".
std::string short_time(double seconds);
// "2,095,104".
std::string thousands(uint64_t value);

// About `target` evenly spaced round values (1, 2 or 5 times a power of ten) covering
// [lo, hi], inside it.
std::vector<double> nice_ticks(double lo, double hi, int target);

// A tick label in `unit`, with as many decimals as the tick spacing needs: "2.5".
std::string tick_label(double seconds, TimeUnit unit, double spacing_seconds);

// A time axis under a plot spanning [x0, x0 + width] for times 0 .. end: line, ticks,
// labels and the title "simulated time (ms)", drawn from y down (about 40 pixels).
std::string time_axis_svg(double x0, double width, double y, double end);
// The tick times time_axis_svg uses, for grid lines.
std::vector<double> time_ticks(double end);

}  // namespace collsim::viz
