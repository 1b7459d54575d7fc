#pragma once
// The axes of a sweep plot: scales (linear or log, with room so that no line sits on the
// frame), ticks (at the data's own values when there are few), and values in human units.
#include <string>
#include <vector>

namespace collsim {

// Where values go on the picture, and the ticks to label.
struct Scale {
  double lo = 0, hi = 1;  // the values at the ends of the axis
  bool log = false;
  bool bytes = false;     // sizes: log ticks by powers of 16 from 1 KiB, linear ones by powers of two
  double pixel_lo = 0, pixel_hi = 1;
  std::vector<double> ticks;
  double at(double value) const;
};

// A scale over `values` ("auto": log when every value is positive and they span more than
// 20x). `data_ticks`: the values to tick (the data's own x values), or empty for round ones.
Scale make_scale(std::vector<double> values, const std::vector<double>& data_ticks, double pixel_lo, double pixel_hi,
                 bool bytes, const std::string& mode);

// Columns whose values are sizes in bytes (collective.size, segment, training.bucket, ...).
bool is_size_column(const std::string& column);

// A value of a column or metric in human units: "64 MiB", "1.5 ms", "9.99 GB/s", "3x".
std::string human_value(const std::string& column, double value);

// "collective.size" -> "size", "training.bucket" -> "bucket".
std::string short_column_name(const std::string& column);

// An axis title for a metric: "simulated time (whole run)", "busbw (bus bandwidth)".
std::string metric_title(const std::string& metric);

}  // namespace collsim
