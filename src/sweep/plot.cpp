#include "sweep/plot.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

#include "algorithms/registry.hpp"
#include "sweep/plot_scale.hpp"
#include "util/errors.hpp"
#include "util/suggest.hpp"

using nlohmann::json;

namespace collsim {
namespace {

const char* const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
constexpr double char_width = 7.2;  // px per character of 12 px sans-serif, a little more than most take

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

// A series' name in a legend: strings as they are (a topology file without its folder),
// numbers with their column's short name and unit ("bucket 25 MiB").
std::string legend_part(const std::string& column, const json& value) {
  if (value.is_string()) {
    std::string text = value.get<std::string>();
    if (column == "topology" && text.find('/') != std::string::npos) text = text.substr(text.rfind('/') + 1);
    return text;
  }
  if (value.is_number()) return short_column_name(column) + " " + human_value(column, value.get<double>());
  return short_column_name(column) + " " + value.dump();
}

// Whether a row's algorithm (an axis of the sweep) ignores this setting: then the legend
// leaves it out ("ring", not "ring, servers 1" beside "parameter-server, servers 4").
bool ignored_by_algorithm(const std::string& column, const ResultRow& row) {
  static const std::map<std::string, bool Uses::*> settings{{"collective.root", &Uses::root},
                                                            {"collective.segment", &Uses::segment},
                                                            {"collective.servers", &Uses::servers},
                                                            {"collective.channels", &Uses::channels}};
  const auto setting = settings.find(column);
  if (setting == settings.end()) return false;
  for (const auto& [name, value] : row.axes)
    if (name == "collective.algorithm" && value.is_string())
      return std::none_of(all_algorithms().begin(), all_algorithms().end(), [&](const AlgorithmInfo& a) {
        return a.name == value.get<std::string>() && a.uses.*(setting->second);
      });
  return false;
}

}  // namespace

// The numeric axis to plot over: --x, or the first numeric axis with several values
// (not --series). Errors name what is there.
std::string choose_x_axis(const std::vector<ResultRow>& rows, const std::vector<std::string>& columns,
                          const PlotSpec& spec) {
  if (!spec.series.empty() && std::find(columns.begin(), columns.end(), spec.series) == columns.end())
    throw InputError(fmt::format("--series: '{}' is not an axis of the results{}; axes: {}", spec.series,
                                 did_you_mean(spec.series, columns), join(columns)));
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
      if (numeric && std::unique(seen.begin(), seen.end()) - seen.begin() > 1) return column;
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

namespace {

struct Point {
  double x, y, model, bound;
  bool stalled;  // the run never finished: its time is when it stopped, not a result
};

struct Line {
  std::vector<std::string> parts;  // the legend's words for this series, one per series column
  std::vector<Point> points;
  const Line* same_as = nullptr;   // an earlier series with the very same points: drawn dashed over it
  std::string label() const { return join(parts, ", "); }
};

// Series with the same values at the same x would hide one another: a later one is drawn
// dashed over the earlier, with hollow squares, and the legend says so.
void find_coinciding(std::map<std::string, Line>& lines) {
  std::vector<Line*> seen;
  for (auto& [key, line] : lines) {
    for (const Line* earlier : seen) {
      const bool same = earlier->points.size() == line.points.size() &&
                        std::equal(line.points.begin(), line.points.end(), earlier->points.begin(), [](const Point& a, const Point& b) {
                          return a.x == b.x && std::fabs(a.y - b.y) <= 1e-6 * std::fabs(b.y);
                        });
      if (same) {
        line.same_as = earlier;
        break;
      }
    }
    seen.push_back(&line);
  }
}

// The points grouped into series by the other axes' values, each sorted by x, and every
// value the axes must cover.
struct Series {
  std::map<std::string, Line> lines;
  std::vector<std::string> columns;  // the columns that tell the series apart
  std::vector<double> xs, ys;
  bool any_stalled = false;
  bool one_collective = false;  // the model and the bound are drawn (see collect_series)
};

// The model and the bound are one collective's time: beside the whole run's time they
// only make sense when the run is one collective.
bool plots_one_collective(const std::vector<ResultRow>& rows, const PlotSpec& spec) {
  if (spec.y == "collective_time") return true;
  return spec.y == "simulated_time" && std::all_of(rows.begin(), rows.end(), [](const auto& row) {
           return !row.metrics.contains("rounds_completed") || !row.metrics["rounds_completed"].is_number() ||
                  row.metrics["rounds_completed"].template get<double>() <= 1;
         });
}

Series collect_series(const std::vector<ResultRow>& rows, const std::vector<std::string>& columns, const PlotSpec& spec) {
  const std::set<std::string> moves_with_x = axes_moving_with_x(rows, columns, spec);
  Series out;
  out.one_collective = plots_one_collective(rows, spec);
  for (const auto& column : columns)
    if (column != spec.x && ((spec.series.empty() && !moves_with_x.count(column)) || column == spec.series))
      out.columns.push_back(column);
  for (const auto& row : rows) {
    double x = 0;
    std::vector<std::string> key, parts;
    for (const auto& [column, value] : row.axes) {
      if (column == spec.x) x = value.is_number() ? value.get<double>() : 0;
      if (std::find(out.columns.begin(), out.columns.end(), column) == out.columns.end()) continue;
      key.push_back(value.dump());
      if (!ignored_by_algorithm(column, row)) parts.push_back(legend_part(column, value));
    }
    auto number = [&](const std::string& metric) {
      return row.metrics.contains(metric) && row.metrics[metric].is_number() ? row.metrics[metric].get<double>() : NAN;
    };
    const bool stalled = row.metrics.contains("stalled") && row.metrics["stalled"].is_boolean() &&
                         row.metrics["stalled"].get<bool>();
    const Point p{x, row.metrics[spec.y].get<double>(), number("model_time"),
                  spec.bound == "none" ? NAN : number(spec.bound), stalled};
    Line& line = out.lines[join(key, "\x1f")];
    line.parts = parts;
    line.points.push_back(p);
    out.any_stalled = out.any_stalled || stalled;
    out.xs.push_back(p.x);
    out.ys.push_back(p.y);
    if (out.one_collective) {
      out.ys.push_back(p.model);
      out.ys.push_back(p.bound);
    }
  }
  for (auto& [key, line] : out.lines)
    std::sort(line.points.begin(), line.points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  for (const auto& reference : spec.references) out.ys.push_back(reference.value);
  find_coinciding(out.lines);
  return out;
}

// Where the plot sits in the picture.
struct Frame {
  double left, right, width, height, top, bottom;
  double plot_right() const { return width - right; }
  double plot_bottom() const { return height - bottom; }
};

// The x ticks are the data's own values when there are at most 12 of them.
std::vector<double> data_ticks(const std::vector<double>& xs) {
  std::vector<double> values(xs);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values.size() <= 12 ? values : std::vector<double>{};
}

// Title, grid, ticks and axis titles. x labels that would overlap their left neighbour are
// left out (the grid line stays).
std::string axes_svg(const PlotSpec& spec, const Frame& f, const Scale& sx, const Scale& sy) {
  std::string svg = fmt::format("<text x=\"{}\" y=\"28\" font-size=\"16\" font-weight=\"bold\">{}</text>\n", f.left,
                                escape(spec.title.empty() ? fmt::format("{} by {}", metric_title(spec.y), spec.x) : spec.title));
  double last_right = -1e9;
  for (double t : sx.ticks) {
    const std::string label = human_value(spec.x, t);
    const double at = sx.at(t), half = label.size() * 6.3 / 2;  // tick labels are mostly digits: narrower
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>", at, f.top, f.plot_bottom());
    if (at - half > last_right + 4) {
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>", at, f.plot_bottom() + 18, escape(label));
      last_right = at + half;
    }
    svg += "\n";
  }
  for (double t : sy.ticks)
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
                       f.left, sy.at(t), f.plot_right(), f.left - 6, sy.at(t) + 4, escape(human_value(spec.y, t)));
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", f.left, f.top,
                     f.plot_right() - f.left, f.plot_bottom() - f.top);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n", (f.left + f.plot_right()) / 2,
                     f.height - 25, escape(spec.x), sx.log ? " (log scale)" : "");
  svg += fmt::format("<text transform=\"translate(22 {}) rotate(-90)\" text-anchor=\"middle\">{}{}</text>\n",
                     (f.top + f.plot_bottom()) / 2, escape(metric_title(spec.y)), sy.log ? " (log scale)" : "");
  return svg;
}

std::string polyline(const std::vector<Point>& points, double (*value)(const Point&), const Scale& sx, const Scale& sy,
                     const std::string& style) {
  std::string line = "<polyline fill=\"none\" " + style + " points=\"";
  for (const Point& p : points)
    if (std::isfinite(value(p)) && (!sy.log || value(p) > 0)) line += fmt::format("{:.1f},{:.1f} ", sx.at(p.x), sy.at(value(p)));
  return line + "\"/>\n";
}

// One series: a solid line with its points (a red cross where the run stalled), and its
// model dashed with a hollow diamond at each point, so that a model equal to the simulated
// time shows as diamonds around the dots instead of vanishing under the line.
std::string series_svg(const Line& line, const char* colour, const Series& series, const Scale& sx, const Scale& sy) {
  std::string svg = polyline(line.points, [](const Point& p) { return p.stalled ? NAN : p.y; }, sx, sy,
                             fmt::format("stroke=\"{}\" stroke-width=\"2\" class=\"series\"{}", colour,
                                         line.same_as ? " stroke-dasharray=\"8 8\"" : ""));
  for (const Point& p : line.points) {
    if (!p.stalled && line.same_as) {
      svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"9\" height=\"9\" fill=\"none\" stroke=\"{}\" "
                         "stroke-width=\"1.5\"/>\n", sx.at(p.x) - 4.5, sy.at(p.y) - 4.5, colour);
      continue;
    }
    if (!p.stalled) {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", sx.at(p.x), sy.at(p.y), colour);
      continue;
    }
    svg += fmt::format("<path class=\"stalled\" d=\"M{0:.1f} {1:.1f}l8 8m0 -8l-8 8\" stroke=\"#c00\" stroke-width=\"2\"/>\n",
                       sx.at(p.x) - 4, sy.at(p.y) - 4);
  }
  if (!series.one_collective) return svg;
  svg += polyline(line.points, [](const Point& p) { return p.model; }, sx, sy,
                  fmt::format("stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\" class=\"model\"", colour));
  for (const Point& p : line.points)
    if (std::isfinite(p.model) && (!sy.log || p.model > 0))
      svg += fmt::format("<path class=\"model-marker\" d=\"M{0:.1f} {1:.1f}l6 6l-6 6l-6 -6z\" fill=\"none\" stroke=\"{2}\" "
                         "stroke-width=\"1.2\"/>\n",
                         sx.at(p.x), sy.at(p.model) - 6, colour);
  return svg;
}

// Where a bound line's label goes: just below one of its points, right-aligned on it, at
// the point whose label box stays inside the plot and farthest from every series' points
// under it (so that the label sits on no line).
const Point* label_anchor(const Line& bound, double label_width, const Series& series, const Scale& sx, const Scale& sy) {
  const Point* best = nullptr;
  double best_gap = -1;
  for (const Point& b : bound.points) {
    if (!std::isfinite(b.bound) || (sy.log && b.bound <= 0)) continue;
    const double right = sx.at(b.x) - 4, left = right - label_width, top = sy.at(b.bound) + 3, bottom = top + 13;
    if (left < sx.pixel_lo + 2 || bottom > sy.pixel_lo - 2) continue;
    double gap = 1e9;
    for (const auto& [key, line] : series.lines)
      for (const Point& p : line.points) {
        const double px = sx.at(p.x), py = sy.at(p.y);
        if (px < left - 10 || px > right + 10) continue;
        gap = std::min(gap, py < top ? top - py : py > bottom ? py - bottom : 0.0);
      }
    if (gap > best_gap) {
      best_gap = gap;
      best = &b;
    }
  }
  return best;
}

// The bound lines, one per distinct bound (series on the same platform share one), dotted
// grey, each labelled with what its series have in common.
std::string bounds_svg(const Series& series, const PlotSpec& spec, const Scale& sx, const Scale& sy) {
  std::map<std::string, std::vector<const Line*>> distinct;  // the line's points -> the series on it
  for (const auto& [key, line] : series.lines) {
    std::string points;
    for (const Point& p : line.points) points += fmt::format("{:.9g},{:.9g};", p.x, p.bound);
    distinct[points].push_back(&line);
  }
  const std::string name = spec.bound == "topology_bound" ? "topology bound" : "lower bound";
  std::string svg;
  for (const auto& [points, lines] : distinct) {
    const Line& first = *lines.front();
    svg += polyline(first.points, [](const Point& p) { return p.bound; }, sx, sy,
                    "stroke=\"#777\" stroke-width=\"1.2\" stroke-dasharray=\"2 3\" class=\"bound\"");
    std::vector<std::string> common;
    for (size_t i = 0; i < first.parts.size(); ++i)
      if (distinct.size() > 1 && std::all_of(lines.begin(), lines.end(), [&](const Line* l) { return l->parts[i] == first.parts[i]; }))
        common.push_back(first.parts[i]);
    const std::string label = common.empty() ? name : name + ": " + join(common, ", ");
    const Point* anchor = label_anchor(first, 6.2 * static_cast<double>(label.size()), series, sx, sy);
    if (anchor == nullptr) continue;
    svg += fmt::format("<text class=\"bound-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"11\" "
                       "fill=\"#555\">{}</text>\n",
                       sx.at(anchor->x) - 4, sy.at(anchor->bound) + 14, escape(label));
  }
  return svg;
}

// Reference lines across the plot, labelled above their left end.
std::string references_svg(const PlotSpec& spec, const Frame& f, const Scale& sy) {
  std::string svg;
  for (const auto& r : spec.references) {
    const double y = sy.at(r.value);
    svg += fmt::format("<line class=\"reference\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#444\" "
                       "stroke-width=\"1.2\" stroke-dasharray=\"10 3 2 3\"/>"
                       "<text class=\"reference-label\" x=\"{3}\" y=\"{4:.1f}\" font-size=\"11\" fill=\"#333\">{5}</text>\n",
                       f.left, y, f.plot_right(), f.left + 6, y - 4,
                       escape(fmt::format("{}: {}", r.label, human_value(spec.y, r.value))));
  }
  return svg;
}

// Ideal scaling: y grows in proportion to x from each series' first point; series that
// start from the same point share one line.
std::string ideal_svg(const Series& series, const Scale& sx, const Scale& sy) {
  std::set<std::string> drawn;
  std::string svg;
  for (const auto& [key, line] : series.lines) {
    if (line.points.size() < 2 || line.points.front().x <= 0) continue;
    const Point& first = line.points.front();
    std::string points;
    for (const Point& p : line.points) points += fmt::format("{:.1f},{:.1f} ", sx.at(p.x), sy.at(first.y * p.x / first.x));
    if (!drawn.insert(points).second) continue;
    svg += fmt::format("<polyline class=\"ideal\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.2\" "
                       "stroke-dasharray=\"1 0\" points=\"{}\"/>\n",
                       points);
  }
  return svg;
}

struct LegendEntry {
  std::string swatch;  // SVG drawn from (0, 0) to (24, 0) around the entry's middle line
  std::string label;
};

std::vector<LegendEntry> legend_entries(const Series& series, const PlotSpec& spec) {
  std::vector<LegendEntry> entries;
  size_t index = 0;
  for (const auto& [key, line] : series.lines) {
    const char* colour = palette[index++ % std::size(palette)];
    if (line.same_as)
      entries.push_back({fmt::format("<line x2=\"24\" stroke=\"{0}\" stroke-width=\"2\" stroke-dasharray=\"8 8\"/>"
                                     "<rect x=\"7.5\" y=\"-4.5\" width=\"9\" height=\"9\" fill=\"none\" stroke=\"{0}\" stroke-width=\"1.5\"/>",
                                     colour),
                         line.label() + " (= " + line.same_as->label() + ")"});
    else
      entries.push_back({fmt::format("<line x2=\"24\" stroke=\"{0}\" stroke-width=\"2\"/><circle cx=\"12\" r=\"3\" fill=\"{0}\"/>", colour),
                         line.label().empty() ? metric_title(spec.y) : line.label()});
  }
  if (series.any_stalled)
    entries.push_back({"<path d=\"M8 -4l8 8m0 -8l-8 8\" stroke=\"#c00\" stroke-width=\"2\"/>", "stalled (time when it stopped)"});
  if (series.one_collective) {
    entries.push_back({"<line x2=\"24\" stroke=\"#333\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>"
                       "<path d=\"M12 -6l6 6l-6 6l-6 -6z\" fill=\"white\" stroke=\"#333\" stroke-width=\"1.2\"/>",
                       "model: dashed, a diamond at each point"});
    if (spec.bound != "none")
      entries.push_back({"<line x2=\"24\" stroke=\"#777\" stroke-width=\"1.2\" stroke-dasharray=\"2 3\"/>",
                         spec.bound == "topology_bound" ? "topology bound (dotted)" : "lower bound (dotted)"});
  }
  if (spec.ideal)
    entries.push_back({"<line x2=\"24\" stroke=\"#555\" stroke-width=\"1.2\"/>",
                       "ideal scaling (in proportion from the first point)"});
  if (!spec.references.empty())
    entries.push_back({"<line x2=\"24\" stroke=\"#444\" stroke-width=\"1.2\" stroke-dasharray=\"10 3 2 3\"/>", "reference (labelled)"});
  return entries;
}

std::string legend_svg(const std::vector<LegendEntry>& entries, const std::string& header, double left, double top) {
  std::string svg = "<g class=\"legend\">\n";
  double y = top;
  if (!header.empty()) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#555\">{}</text>\n", left, y + 4, escape(header));
    y += 18;
  }
  for (const auto& entry : entries) {
    svg += fmt::format("<g transform=\"translate({} {})\">{}</g><text x=\"{}\" y=\"{}\">{}</text>\n", left, y, entry.swatch,
                       left + 30, y + 4, escape(entry.label));
    y += 18;
  }
  return svg + "</g>\n";
}

}  // namespace

std::string plot_svg(const std::vector<ResultRow>& all_rows, const PlotSpec& given) {
  std::vector<ResultRow> rows;
  for (const auto& row : all_rows)
    if (has_metrics(row) && row.metrics.contains(given.y) && row.metrics[given.y].is_number()) rows.push_back(row);
  if (rows.empty()) throw InputError(fmt::format("--plot: no successful point has a value for '{}'", given.y));
  std::vector<std::string> columns;
  for (const auto& [name, value] : rows.front().axes) columns.push_back(name);
  PlotSpec spec = given;
  spec.x = choose_x_axis(rows, columns, spec);
  const Series series = collect_series(rows, columns, spec);
  std::vector<std::string> header_names;
  for (const auto& column : series.columns) header_names.push_back(short_column_name(column));
  const std::string header = series.lines.size() > 1 ? join(header_names, ", ") : "";
  const std::vector<LegendEntry> entries = legend_entries(series, spec);

  // The legend sits right of the plot, in a margin widened for its longest label: no label runs off.
  size_t longest = header.size() * 11 / 12;
  for (const auto& entry : entries) longest = std::max(longest, entry.label.size() + 4);
  const double left = 90, right = std::max(250.0, 20 + char_width * static_cast<double>(longest));
  const double legend_bottom = 60 + 18.0 * static_cast<double>(entries.size() + (header.empty() ? 0 : 1));
  const Frame frame{left, right, left + 480 + right, std::max(520.0, legend_bottom + 20), 50, 70};
  std::vector<double> ys = series.ys;
  if (spec.ideal)
    for (const auto& [key, line] : series.lines)
      if (!line.points.empty() && line.points.front().x > 0)
        for (const Point& p : line.points) ys.push_back(line.points.front().y * p.x / line.points.front().x);
  const Scale sx = make_scale(series.xs, data_ticks(series.xs), frame.left, frame.plot_right(), is_size_column(spec.x), spec.x_scale);
  const Scale sy = make_scale(ys, {}, frame.plot_bottom(), frame.top, is_size_column(spec.y), spec.y_scale);

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"DejaVu Sans, Verdana, sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      frame.width, frame.height);
  svg += axes_svg(spec, frame, sx, sy);
  if (series.one_collective && spec.bound != "none") svg += bounds_svg(series, spec, sx, sy);
  if (spec.ideal) svg += ideal_svg(series, sx, sy);
  svg += references_svg(spec, frame, sy);
  size_t index = 0;
  for (const auto& [key, line] : series.lines) svg += series_svg(line, palette[index++ % std::size(palette)], series, sx, sy);
  svg += legend_svg(entries, header, frame.plot_right() + 12, frame.top + 10);
  return svg + "</svg>\n";
}

}  // namespace collsim
