#include "viz/charts.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "viz/palette.hpp"
#include "util/units.hpp"
#include "viz/svg.hpp"

namespace collsim::viz {

using nlohmann::json;

namespace {

constexpr const char* font = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif";

std::string svg_open(double width, double height, const char* css_class, const std::string& title) {
  return fmt::format(R"~(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" class="{2}" font-family="{3}" font-size="12"><title>{4}</title>)~"
                     "\n",
                     num(width), num(height), css_class, font, esc(title));
}

// White to dark blue, for utilisation 0 .. 1.
std::string utilisation_color(double u) {
  u = std::clamp(u, 0.0, 1.0);
  const double from[3] = {247, 251, 255}, to[3] = {8, 48, 107};
  int c[3];
  for (int i = 0; i < 3; ++i) c[i] = static_cast<int>(std::lround(from[i] + (to[i] - from[i]) * u));
  return fmt::format("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]);
}

constexpr const char* epoch_colors[] = {"#4e79a7", "#8c564b", "#b07aa1", "#9c755f", "#76b7b2"};

}  // namespace

std::string rounds_chart_svg(const TraceView& t, double width) {
  if (t.rounds.empty()) return "";
  const double left = 70, right = 20, top = 16, plot_height = 170, bottom = 58;
  const double height = top + plot_height + bottom;
  const double plot_width = width - left - right;
  double longest = 0;
  for (const auto& r : t.rounds) longest = std::max(longest, r.end - r.start);
  if (longest <= 0) longest = 1e-12;
  const auto ticks = nice_ticks(0, longest * 1.08, 5);
  const double top_value = std::max(longest * 1.08, ticks.back());
  const TimeUnit unit = time_unit_for(top_value);
  auto y = [&](double seconds) { return top + plot_height - seconds / top_value * plot_height; };

  std::string out = svg_open(width, height, "collsim-rounds", "Time per round of " + t.name);
  out += fmt::format(R"~(<rect width="{}" height="{}" fill="#ffffff"/>)~", num(width), num(height));
  const double spacing = ticks.size() > 1 ? ticks[1] - ticks[0] : top_value;
  for (double tick : ticks) {
    out += fmt::format(R"~(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="{3}"/>)~", num(left), num(left + plot_width),
                       num(y(tick)), colors::grid);
    out += fmt::format(R"~(<text x="{}" y="{}" font-size="11" fill="#3b4450" text-anchor="end">{}</text>)~", num(left - 6),
                       num(y(tick) + 4), tick_label(tick, unit, spacing));
  }
  out += fmt::format(R"~(<text transform="translate(14,{}) rotate(-90)" font-size="11" fill="#3b4450" text-anchor="middle">round time ({})</text>)~",
                     num(top + plot_height / 2), unit.name);
  const double band = plot_width / static_cast<double>(t.rounds.size());
  const double bar = std::min(60.0, band * 0.7);
  bool epochs = false;
  for (size_t i = 0; i < t.rounds.size(); ++i) {
    const auto& r = t.rounds[i];
    const double duration = r.end - r.start, compute = std::min(r.compute, duration);
    const double cx = left + band * (static_cast<double>(i) + 0.5), x0 = cx - bar / 2;
    const char* color = epoch_colors[static_cast<size_t>(r.epoch) % std::size(epoch_colors)];
    epochs = epochs || r.epoch > 0;
    out += fmt::format(R"~(<rect class="round-compute" x="{}" y="{}" width="{}" height="{}" fill="{}"/>)~", num(x0),
                       num(y(compute)), num(bar), num(y(0) - y(compute)), colors::compute);
    out += fmt::format(R"~(<rect class="round-bar" x="{}" y="{}" width="{}" height="{}" fill="{}" data-round="{}"><title>{}</title></rect>)~",
                       num(x0), num(y(duration)), num(bar), num(y(compute) - y(duration)), color, r.round,
                       esc(fmt::format("round {} (epoch {}, {} ranks): {}, compute {}, collective {}", r.round, r.epoch,
                                       r.group.size(), short_time(duration), short_time(r.compute),
                                       short_time(r.collective))));
    if (band > 44)
      out += fmt::format(R"~(<text x="{}" y="{}" font-size="10" fill="#222831" text-anchor="middle">{}</text>)~", num(cx),
                         num(y(duration) - 4), esc(short_time(duration)));
    if (band > 14 || i % static_cast<size_t>(std::ceil(14 / band)) == 0)
      out += fmt::format(R"~(<text x="{}" y="{}" font-size="11" fill="#3b4450" text-anchor="middle">{}</text>)~", num(cx),
                         num(top + plot_height + 15), r.round);
    for (const auto& event : t.recovery)
      if (event.round == r.round && event.rebuilds())
        out += fmt::format(R"~(<path d="M{},{} l-5,-9 h10 z" fill="{}"><title>{}</title></path>)~", num(cx),
                           num(y(duration) - (band > 44 ? 16 : 3)), colors::fault,
                           esc(fmt::format("rebuild to epoch {} during this round", event.epoch_after)));
  }
  out += fmt::format(R"~(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#3b4450"/>)~", num(left), num(left + plot_width),
                     num(y(0)));
  out += fmt::format(R"~(<text x="{}" y="{}" font-size="11" fill="#3b4450" text-anchor="middle">round</text>)~",
                     num(left + plot_width / 2), num(top + plot_height + 31));
  // Legend.
  double lx = left;
  const double ly = height - 12;
  auto item = [&](const std::string& color, const std::string& label) {
    out += fmt::format(R"~(<rect x="{}" y="{}" width="14" height="10" fill="{}"/><text x="{}" y="{}" font-size="11" fill="#222831">{}</text>)~",
                       num(lx), num(ly - 9), color, num(lx + 19), num(ly), esc(label));
    lx += 19 + label.size() * 6.3 + 18;
  };
  item(colors::compute, "compute");
  item(epoch_colors[0], epochs ? "collective (epoch 0)" : "collective");
  if (epochs)
    for (int e = 1; e < static_cast<int>(std::size(epoch_colors)); ++e)
      if (std::any_of(t.rounds.begin(), t.rounds.end(), [e](const auto& r) { return r.epoch == e; }))
        item(epoch_colors[e], fmt::format("after rebuild (epoch {})", e));
  return out + "</svg>\n";
}

double link_load(const TraceView& t, const TraceLink& link) {
  const double capacity = link.bandwidth * std::max(t.simulated_time, 1e-12);
  return capacity > 0 ? link.bytes / capacity : 0;
}

namespace {

// The links of the topology bound's cut, when it binds more than the ranks' own links.
std::vector<std::string> cut_link_names(const TraceView& t) {
  const json& s = t.summary;
  const auto number = [&](const char* key) { return s.contains(key) && s[key].is_number() ? s[key].get<double>() : 0.0; };
  if (s.contains("topology_cut") && number("topology_bound") > number("lower_bound") * (1 + 1e-9))
    return s["topology_cut"].value("bottleneck_links", std::vector<std::string>{});
  return {};
}

}  // namespace

std::vector<const TraceLink*> links_by_load(const TraceView& t) {
  std::vector<const TraceLink*> links;
  for (const auto& link : t.links) links.push_back(&link);
  const std::vector<std::string> cut = cut_link_names(t);
  auto in_cut = [&](const TraceLink* link) { return std::find(cut.begin(), cut.end(), link->name) != cut.end(); };
  // Equal loads: the cut's links first, then the longer busy, then by name.
  std::stable_sort(links.begin(), links.end(), [&](const TraceLink* a, const TraceLink* b) {
    const double la = link_load(t, *a), lb = link_load(t, *b);
    if (std::fabs(la - lb) > 1e-3 * std::max(la, lb)) return la > lb;
    if (in_cut(a) != in_cut(b)) return in_cut(a);
    if (a->busy_time != b->busy_time) return a->busy_time > b->busy_time;
    return a->name < b->name;
  });
  return links;
}

std::vector<std::string> bottleneck_link_names(const TraceView& t) {
  if (auto cut = cut_link_names(t); !cut.empty()) return cut;
  const auto links = links_by_load(t);
  if (links.empty()) return {};
  std::vector<std::string> top;
  const double most = link_load(t, *links.front());
  for (const TraceLink* link : links)
    if (most > 0 && link_load(t, *link) >= most * 0.999) top.push_back(link->name);
  // A ring loads every link alike: then no link is the bottleneck.
  if (top.size() * 2 >= links.size()) return {};
  return top;
}

std::string link_heatmap_svg(const TraceView& t, double width) {
  std::vector<const TraceLink*> links;
  for (const TraceLink* link : links_by_load(t))
    if (!link->series.empty() && links.size() < heatmap_max_links) links.push_back(link);
  if (links.empty() || t.link_bins <= 0 || t.link_bin_width <= 0) return "";
  const double left = 230, busy_width = 150, right = 20, top = 10, row = 18;
  const double plot_width = width - left - busy_width - right;
  const double rows_bottom = top + row * static_cast<double>(links.size());
  const double height = rows_bottom + 40 + 34;
  const double end = t.link_bin_width * t.link_bins;
  auto x = [&](double seconds) { return left + seconds / end * plot_width; };

  std::string out = svg_open(width, height, "collsim-links", "Link utilisation over time, " + t.name);
  out += fmt::format(R"~(<rect width="{}" height="{}" fill="#ffffff"/>)~", num(width), num(height));
  const std::vector<std::string> named = bottleneck_link_names(t);
  for (size_t i = 0; i < links.size(); ++i) {
    const TraceLink& link = *links[i];
    const double y0 = top + row * static_cast<double>(i);
    const bool bottleneck = std::find(named.begin(), named.end(), link.name) != named.end();
    out += fmt::format(R"~(<text x="{}" y="{}" font-size="11" fill="#222831" text-anchor="end"{}>{}</text>)~", num(left - 8),
                       num(y0 + row - 5), bottleneck ? R"~( font-weight="bold")~" : "", esc(link.name));
    // Bins of equal (rounded) utilisation merge into one rectangle.
    const double capacity = link.bandwidth * t.link_bin_width;
    size_t b = 0;
    while (b < link.series.size()) {
      const auto level = [&](size_t k) {
        return capacity > 0 ? std::lround(std::clamp(link.series[k] / capacity, 0.0, 1.0) * 20) : 0L;
      };
      size_t e = b + 1;
      while (e < link.series.size() && level(e) == level(b)) ++e;
      const double u = static_cast<double>(level(b)) / 20;
      out += fmt::format(R"~(<rect class="heat" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>)~",
                         num(x(static_cast<double>(b) * t.link_bin_width)), num(y0 + 1),
                         num(x(static_cast<double>(e) * t.link_bin_width) - x(static_cast<double>(b) * t.link_bin_width) + 0.3),
                         num(row - 2), utilisation_color(u),
                         esc(fmt::format("{}: {:.0f}% of {} from {} to {}", link.name, u * 100, format_bandwidth(link.bandwidth, 3),
                                         short_time(static_cast<double>(b) * t.link_bin_width),
                                         short_time(static_cast<double>(e) * t.link_bin_width))));
      b = e;
    }
    for (const auto& [time, bandwidth] : link.bandwidth_changes)
      out += fmt::format(R"~(<rect x="{}" y="{}" width="2.5" height="{}" fill="{}"><title>{}</title></rect>)~",
                         num(x(time) - 1), num(y0), num(row), colors::fault,
                         esc(fmt::format("bandwidth set to {} at {}", format_bandwidth(bandwidth, 3), short_time(time))));
    // Load over the run: the bytes against what the bandwidth could carry.
    const double share = std::clamp(link_load(t, link), 0.0, 1.0);
    const double bx = left + plot_width + 12;
    out += fmt::format(R"~(<rect x="{}" y="{}" width="{}" height="{}" fill="#eef0f3"/>)~", num(bx), num(y0 + 3),
                       num(busy_width - 60), num(row - 6));
    out += fmt::format(R"~(<rect class="busy" x="{}" y="{}" width="{}" height="{}" fill="{}"/>)~", num(bx), num(y0 + 3),
                       num((busy_width - 60) * share), num(row - 6), bottleneck ? colors::fault : "#5f6b7a");
    out += fmt::format(R"~(<text x="{}" y="{}" font-size="11" fill="#222831">{:.0f}%</text>)~", num(bx + busy_width - 54),
                       num(y0 + row - 5), share * 100);
  }
  out += fmt::format(R"~(<text x="{}" y="{}" font-size="10" fill="#5f6b7a">load over the run</text>)~",
                     num(left + plot_width + 12), num(rows_bottom + 14));
  out += time_axis_svg(left, plot_width, rows_bottom + 2, end);
  // Colour scale.
  const double sx = left, sy = height - 14;
  out += fmt::format(R"~(<text x="{}" y="{}" font-size="11" fill="#222831" text-anchor="end">utilisation of the link's bandwidth</text>)~",
                     num(sx - 8), num(sy + 9));
  for (int i = 0; i <= 20; ++i)
    out += fmt::format(R"~(<rect x="{}" y="{}" width="8" height="10" fill="{}"/>)~", num(sx + i * 8), num(sy),
                       utilisation_color(i / 20.0));
  out += fmt::format(R"~(<text x="{}" y="{}" font-size="10" fill="#5f6b7a">0%</text><text x="{}" y="{}" font-size="10" fill="#5f6b7a">100%</text>)~",
                     num(sx), num(sy - 2), num(sx + 150), num(sy - 2));
  return out + "</svg>\n";
}

}  // namespace collsim::viz
