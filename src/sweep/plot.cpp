#include "sweep/plot.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

#include "util/errors.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"

using nlohmann::json;

namespace collsim {
namespace {

const char* const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

struct Scale {
  double lo, hi;
  bool log;
  double base;  // log scales: 10, or 16 for sizes in bytes (1 KiB, 16 KiB, 256 KiB, ...)
  bool bytes;   // sizes: linear ticks at powers of two bytes (512 KiB, 1 MiB, 2 MiB, ...)
  double pixel_lo, pixel_hi;
  double at(double v) const {
    const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return pixel_lo + t * (pixel_hi - pixel_lo);
  }
};

Scale make_scale(std::vector<double> values, double pixel_lo, double pixel_hi, bool bytes) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }), values.end());
  double lo = values.empty() ? 0 : *std::min_element(values.begin(), values.end());
  double hi = values.empty() ? 1 : *std::max_element(values.begin(), values.end());
  // Logarithmic when everything is positive and the values span more than a decade.
  const bool log = lo > 0 && hi / lo > 20;
  const double base = bytes ? 16 : 10;
  if (log) {
    const double unit = bytes ? 1024 : 1;  // sizes: powers of 16 from 1 KiB
    lo = unit * std::pow(base, std::floor(std::log(lo / unit) / std::log(base)));
    hi = unit * std::pow(base, std::ceil(std::log(hi / unit) / std::log(base)));
  } else {
    if (lo > 0 && lo < hi / 3) lo = 0;
    if (hi == lo) hi = lo + (lo == 0 ? 1 : std::fabs(lo));
    const double pad = (hi - lo) * 0.05;
    hi += pad;
    if (lo != 0) lo -= pad;
  }
  return {lo, hi, log, base, bytes, pixel_lo, pixel_hi};
}

std::vector<double> ticks(const Scale& s) {
  std::vector<double> out;
  if (s.log) {
    for (double v = s.lo; v <= s.hi * 1.0001; v *= s.base) out.push_back(v);
    return out;
  }
  // About five steps: sizes by a power of two bytes, so that labels read whole (2 MiB, 4 MiB, ...);
  // other values by 2, 5 or 10 times a power of ten.
  const double raw = (s.hi - s.lo) / 5;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  const double step = s.bytes ? std::max(1.0, std::exp2(std::ceil(std::log2(raw))))
                     : raw / magnitude < 2 ? 2 * magnitude : raw / magnitude < 5 ? 5 * magnitude : 10 * magnitude;
  for (double v = std::ceil(s.lo / step) * step; v <= s.hi; v += step) out.push_back(v);
  return out;
}

std::string label_of(const std::string& column, double v) {
  if (column.find("time") != std::string::npos || column == "lower_bound") return format_time(v);
  if (column.find("size") != std::string::npos || column.find("segment") != std::string::npos) return format_size(v);
  if (column.find("bw") != std::string::npos) return format_bandwidth(v);
  return fmt::format("{:g}", v);
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

std::string value_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

// The numeric axis to plot over: --x, or the first numeric axis with several values
// (not --series). Errors name what is there.
std::string choose_x_axis(const std::vector<ResultRow>& rows, const std::vector<std::string>& columns,
                          const PlotSpec& spec) {
  if (spec.x.empty()) {
    for (const auto& column : columns) {
      if (column == spec.series) continue;  // the lines' axis is not the x axis
      std::vector<double> seen;
      bool numeric = true;
      for (const auto& row : rows)
        for (const auto& [name, value] : row.axes)
          if (name == column) {
            numeric = numeric && value.is_number();
            if (value.is_number()) seen.push_back(value.get<double>());
          }
      std::sort(seen.begin(), seen.end());
      if (numeric && std::unique(seen.begin(), seen.end()) - seen.begin() > 1) {
        return column;
      }
    }
    throw InputError(fmt::format("--x: no numeric axis with several values to plot over{}; axes: {}",
                                 spec.series.empty() ? "" : " besides --series " + spec.series, join(columns)));
  }
  if (std::find(columns.begin(), columns.end(), spec.x) == columns.end())
    throw InputError(fmt::format("--x: '{}' is not a numeric axis of the results{}; axes: {}", spec.x,
                                 did_you_mean(spec.x, columns), join(columns)));
  return spec.x;
}

std::set<std::string> axes_moving_with_x(const std::vector<ResultRow>& rows, const std::vector<std::string>& columns,
                                         const PlotSpec& spec) {
  // Axes that move with x (a zip group: workers and size together) would make one series
  // per point: they are not series, x stands for them.
  std::set<std::string> moves_with_x;
  for (const auto& column : columns) {
    if (column == spec.x || column == spec.series) continue;
    std::map<std::string, std::set<std::string>> values_at_x;
    std::set<std::string> values;
    for (const auto& row : rows) {
      std::string x_text, value;
      for (const auto& [name, v] : row.axes) {
        if (name == spec.x) x_text = v.dump();
        if (name == column) value = v.dump();
      }
      values_at_x[x_text].insert(value);
      values.insert(value);
    }
    const bool one_per_x = std::all_of(values_at_x.begin(), values_at_x.end(), [](const auto& e) { return e.second.size() == 1; });
    if (one_per_x && values.size() > 1) moves_with_x.insert(column);
  }
  return moves_with_x;
}

// The legend's lines for stalled points, the model and the lower bound, from legend_y down.
std::string legend_extras(bool any_stalled, const std::string& stalled_label, bool one_collective, double left,
                          double legend_y) {
  std::string svg;
  if (any_stalled) {
    svg += fmt::format("<path d=\"M{0} {1}l8 8m0 -8l-8 8\" stroke=\"#c00\" stroke-width=\"2\"/>"
                       "<text x=\"{2}\" y=\"{3}\">{4}</text>\n",
                       left + 20, legend_y - 4, left + 42, legend_y + 4, stalled_label);
    legend_y += 18;
  }
  if (one_collective) {
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333\" stroke-dasharray=\"6 4\"/>"
                       "<text x=\"{3}\" y=\"{4}\">model (alpha-beta)</text>\n",
                       left + 12, legend_y + 6, left + 36, left + 42, legend_y + 10);
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#888\" stroke-dasharray=\"2 3\"/>"
                       "<text x=\"{3}\" y=\"{4}\">lower bound</text>\n",
                       left + 12, legend_y + 24, left + 36, left + 42, legend_y + 28);
  }
  return svg;
}

namespace {

struct Point {
  double x, y, model, bound;
  bool stalled;  // the run never finished: its time is when it stopped, not a result
};

// The points grouped into series by the other axes' values, each sorted by x, and every
// value the axes must cover.
struct Series {
  std::map<std::string, std::vector<Point>> lines;
  std::vector<double> xs, ys;
  bool any_stalled = false;
  bool one_collective = false;  // the model and the bound are drawn (see collect_series)
};

Series collect_series(const std::vector<ResultRow>& rows, const std::vector<std::string>& columns, const PlotSpec& spec) {
  const std::set<std::string> moves_with_x = axes_moving_with_x(rows, columns, spec);
  Series out;
  // The model and the bound are one collective's time: beside the whole run's time they
  // only make sense when the run is one collective.
  out.one_collective =
      spec.y == "collective_time" ||
      (spec.y == "simulated_time" && std::all_of(rows.begin(), rows.end(), [](const auto& row) {
         return !row.metrics.contains("rounds_completed") || !row.metrics["rounds_completed"].is_number() ||
                row.metrics["rounds_completed"].template get<double>() <= 1;
       }));
  for (const auto& row : rows) {
    double x = 0;
    std::vector<std::string> name;
    for (const auto& [column, value] : row.axes) {
      if (column == spec.x) x = value.is_number() ? value.get<double>() : 0;
      else if ((spec.series.empty() && !moves_with_x.count(column)) || column == spec.series)
        name.push_back(column + "=" + (value.is_number() ? label_of(column, value.get<double>()) : value_text(value)));
    }
    auto number = [&](const char* metric) {
      return row.metrics.contains(metric) && row.metrics[metric].is_number() ? row.metrics[metric].get<double>() : NAN;
    };
    const bool stalled = row.metrics.contains("stalled") && row.metrics["stalled"].is_boolean() &&
                         row.metrics["stalled"].get<bool>();
    const Point p{x, row.metrics[spec.y].get<double>(), number("model_time"), number("lower_bound"), stalled};
    out.lines[join(name, ", ")].push_back(p);
    out.any_stalled = out.any_stalled || stalled;
    out.xs.push_back(p.x);
    out.ys.push_back(p.y);
    if (out.one_collective) {
      out.ys.push_back(p.model);
      out.ys.push_back(p.bound);
    }
  }
  for (auto& [name, points] : out.lines)
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  return out;
}

// Where the plot sits in the picture.
struct Frame {
  double left, right, width, height, top, bottom;
};

// Title, grid, ticks and axis labels.
std::string axes_svg(const PlotSpec& spec, const Frame& f, const Scale& sx, const Scale& sy) {
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      f.width, f.height, f.width, f.height);
  svg += fmt::format("<text x=\"{}\" y=\"28\" font-size=\"16\" font-weight=\"bold\">{}</text>\n", f.left,
                     escape(spec.title.empty() ? fmt::format("{} by {}", spec.y, spec.x) : spec.title));
  for (double t : ticks(sx))
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                       sx.at(t), f.top, f.height - f.bottom, f.height - f.bottom + 18, escape(label_of(spec.x, t)));
  for (double t : ticks(sy))
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
                       f.left, sy.at(t), f.width - f.right, f.left - 6, sy.at(t) + 4, escape(label_of(spec.y, t)));
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", f.left,
                     f.top, f.width - f.right - f.left, f.height - f.bottom - f.top);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n", (f.left + f.width - f.right) / 2,
                     f.height - 25, escape(spec.x), sx.log ? " (log scale)" : "");
  svg += fmt::format("<text transform=\"translate(22 {}) rotate(-90)\" text-anchor=\"middle\">{}{}</text>\n",
                     (f.top + f.height - f.bottom) / 2, escape(spec.y), sy.log ? " (log scale)" : "");
  return svg;
}

// One series: a solid line with its points (a red cross where the run stalled), its model
// dashed and the lower bound dotted grey, and its legend entry at legend_y.
std::string series_svg(const std::string& name, const std::vector<Point>& points, const char* colour,
                       const Series& series, const PlotSpec& spec, const Frame& f, const Scale& sx, const Scale& sy,
                       double legend_y) {
  auto polyline = [&](auto value, const std::string& style) {
    std::string line = "<polyline fill=\"none\" " + style + " points=\"";
    for (const Point& p : points)
      if (std::isfinite(value(p)) && (!sy.log || value(p) > 0)) line += fmt::format("{:.1f},{:.1f} ", sx.at(p.x), sy.at(value(p)));
    return line + "\"/>\n";
  };
  std::string svg = polyline([](const Point& p) { return p.stalled ? NAN : p.y; },
                             fmt::format("stroke=\"{}\" stroke-width=\"2\"", colour));
  for (const Point& p : points) {
    if (!p.stalled) {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", sx.at(p.x), sy.at(p.y), colour);
      continue;
    }
    svg += fmt::format("<path d=\"M{0:.1f} {1:.1f}l8 8m0 -8l-8 8\" stroke=\"#c00\" stroke-width=\"2\"/>\n",
                       sx.at(p.x) - 4, sy.at(p.y) - 4);
  }
  if (series.one_collective) {
    svg += polyline([](const Point& p) { return p.model; },
                    fmt::format("stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"", colour));
    svg += polyline([](const Point& p) { return p.bound; }, "stroke=\"#888\" stroke-width=\"1\" stroke-dasharray=\"2 3\"");
  }
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"/>"
                     "<text x=\"{4}\" y=\"{5}\">{6}</text>\n",
                     f.width - f.right + 12, legend_y, f.width - f.right + 36, colour, f.width - f.right + 42,
                     legend_y + 4, escape(name.empty() ? spec.y : name));
  return svg;
}

}  // namespace

std::string plot_svg(const std::vector<ResultRow>& all_rows, const PlotSpec& given) {
  std::vector<ResultRow> rows;
  for (const auto& row : all_rows)
    if (row.status == "ok" && row.metrics.contains(given.y) && row.metrics[given.y].is_number()) rows.push_back(row);
  if (rows.empty()) throw InputError(fmt::format("--plot: no successful point has a value for '{}'", given.y));
  std::vector<std::string> columns;
  for (const auto& [name, value] : rows.front().axes) columns.push_back(name);
  PlotSpec spec = given;
  spec.x = choose_x_axis(rows, columns, spec);
  const Series series = collect_series(rows, columns, spec);

  // The legend sits right of the plot, in a margin of 250 px widened for its longest label, at
  // an estimated 7 px per character of 12 px sans-serif (most take less): no label runs off.
  const std::string stalled_label = "stalled (time when it stopped)";
  size_t longest = series.any_stalled ? stalled_label.size() : 0;
  for (const auto& [name, points] : series.lines) longest = std::max(longest, (name.empty() ? spec.y : name).size());
  const double left = 90, right = std::max(250.0, 42 + 7.0 * longest);
  const Frame frame{left, right, left + 480 + right, 520, 50, 70};
  auto is_size = [](const std::string& column) {
    return column.find("size") != std::string::npos || column.find("segment") != std::string::npos;
  };
  const Scale sx = make_scale(series.xs, frame.left, frame.width - frame.right, is_size(spec.x));
  const Scale sy = make_scale(series.ys, frame.height - frame.bottom, frame.top, is_size(spec.y));
  std::string svg = axes_svg(spec, frame, sx, sy);
  size_t index = 0;
  double legend_y = frame.top + 10;
  for (const auto& [name, points] : series.lines) {
    svg += series_svg(name, points, palette[index++ % std::size(palette)], series, spec, frame, sx, sy, legend_y);
    legend_y += 18;
  }
  svg += legend_extras(series.any_stalled, stalled_label, series.one_collective, frame.width - frame.right, legend_y);
  return svg + "</svg>\n";
}

}  // namespace collsim
