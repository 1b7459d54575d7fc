#include "viz/parallel_report.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <iterator>
#include <map>
#include <set>

#include "parallel/step_perfetto.hpp"
#include "trace/parallel_trace.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"
#include "viz/palette.hpp"
#include "viz/report_assets.hpp"
#include "viz/svg.hpp"

namespace collsim::viz {

using nlohmann::json;

namespace {

constexpr double left = 170, plot_width = 820, row_height = 12, row_gap = 2, rank_gap = 8, axis_height = 30;
constexpr int max_ranks = 16;           // ranks drawn (the first ones); the rest are named in the lead
constexpr size_t max_tooltips = 4000;   // each bar has a tooltip up to this many bars

// One colour per lane: the step's lanes fixed, other communicators from a rotation.
std::string lane_color(const std::string& lane, int order) {
  static const std::map<std::string, std::string> fixed{{"compute", "#6a51a3"}, {"tensor", "#1b7f79"},
                                                        {"pipeline", "#e6ab02"}, {"expert", "#d95f02"},
                                                        {"data", "#1f78b4"}};
  static const char* const others[] = {"#1b9e77", "#e7298a", "#66a61e", "#a6761d", "#7570b3", "#666666"};
  if (const auto it = fixed.find(lane); it != fixed.end()) return it->second;
  return others[static_cast<size_t>(order) % std::size(others)];
}

std::string card(const std::string& value, const std::string& label, const char* tone = "") {
  return fmt::format("<div class=\"card {}\"><div class=\"value\">{}</div><div class=\"label\">{}</div></div>", tone,
                     esc(value), esc(label));
}

std::string row(const std::string& label, const std::string& value) {
  return fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", esc(label), esc(value));
}

std::string share(double seconds, double step) {
  return fmt::format("{} ({:.1f}% of the step)", format_time(seconds), step > 0 ? 100 * seconds / step : 0.0);
}

// The cards and the table of a step's figures: the slowest rank's breakdown first.
std::string step_summary(const json& parallel) {
  const json& step = parallel.at("step");
  const json& f = step.at("figures");
  const double t = f.at("step_time").get<double>();
  std::string out = "<div class=\"cards\">";
  out += card(format_time(t), "step time");
  out += card(fmt::format("{:.4g}", f.at("tokens_per_second").get<double>()), "tokens per second");
  out += card(fmt::format("{:.1f}%", 100 * f.at("mfu").get<double>()), "MFU");
  out += card(fmt::format("{:.1f}%", 100 * f.at("bubble_fraction").get<double>()), "pipeline bubble (slowest rank)");
  const bool verified = parallel.at("verified").get<bool>();
  out += card(verified ? "yes" : "no", fmt::format("{} collectives verified", step.at("collectives").get<uint64_t>()),
              verified ? "ok" : "bad");
  out += "</div>\n<table class=\"summary\">\n";
  out += row("model", fmt::format("{} on {}, {} micro-batches per replica", step.at("model").get<std::string>(),
                                  step.at("gpu").get<std::string>(), step.at("micro_batches").get<int>()));
  const json& exposed = f.at("exposed");
  out += row("slowest rank", std::to_string(f.at("critical_rank").get<int>()));
  out += row("  compute", share(f.at("compute").get<double>(), t));
  out += row("  tensor (exposed)", share(exposed.at("tensor").get<double>(), t));
  out += row("  expert (exposed)", share(exposed.at("expert").get<double>(), t));
  out += row("  pipeline (bubble and waits)", share(exposed.at("pipeline").get<double>(), t));
  out += row("  data (exposed after backward)", share(exposed.at("data").get<double>(), t));
  return out + "</table>\n";
}

std::string plain_summary(const json& parallel) {
  const bool verified = parallel.at("verified").get<bool>();
  std::string out = "<div class=\"cards\">";
  out += card(format_time(parallel.at("step_time").get<double>()), "the last collective's end");
  out += card(std::to_string(parallel.at("communicators").size()), "communicators at once");
  out += card(thousands(parallel.at("message_count").get<uint64_t>()), "messages");
  out += card(verified ? "yes" : "no", fmt::format("{} rank results verified", parallel.at("checked_ranks").get<int>()),
              verified ? "ok" : "bad");
  return out + "</div>\n";
}

std::string communicator_table(const json& parallel) {
  const bool step = parallel.contains("step");
  std::string out = "<table><tr><th>communicator</th><th class=\"num\">groups</th><th class=\"num\">ranks each</th>";
  out += step ? "<th class=\"num\">busy (most busy rank)</th><th class=\"num\">exposed (slowest rank)</th><th>most exposed</th>"
              : "<th>collective</th><th class=\"num\">time</th><th class=\"num\">model, one group alone</th><th>why</th>";
  out += "</tr>\n";
  for (const json& c : parallel.at("communicators")) {
    const json& groups = c.at("groups");
    out += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>", esc(c.at("name").get<std::string>()),
                       groups.size(), groups.empty() ? 0 : groups.at(0).at("ranks").size());
    if (step)
      out += fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td><td>rank {} waited {}</td>",
                         format_time(c.at("time").get<double>()), format_time(c.at("exposed").get<double>()),
                         c.at("most_exposed").at("rank").get<int>(), format_time(c.at("most_exposed").at("seconds").get<double>()));
    else
      out += fmt::format("<td>{} {}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td>",
                         esc(c.at("collective").get<std::string>()), esc(c.at("algorithm").get<std::string>()),
                         format_time(c.at("time").get<double>()), format_time(c.at("model_time").get<double>()),
                         esc(c.at("reason").get<std::string>()));
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// One row per lane of each of the first ranks, one bar per interval, on a shared time axis.
std::string lanes_svg(const std::vector<StepInterval>& intervals, double end) {
  LaneOrder order;
  std::map<int, std::set<std::pair<int, std::string>>> rows;  // rank -> its lanes, in LaneOrder
  for (const StepInterval& i : intervals)
    if (i.rank < max_ranks) rows[i.rank].insert({order(i.lane), i.lane});
  std::map<std::pair<int, std::string>, double> top;  // (rank, lane) -> y
  double y = axis_height;
  std::string labels;
  for (const auto& [rank, lanes] : rows) {
    for (const auto& [id, lane] : lanes) {
      top[{rank, lane}] = y;
      labels += fmt::format(R"~(<text x="{}" y="{}" class="small" text-anchor="end">rank {} {}</text>)~", num(left - 8),
                            num(y + 9.5), rank, esc(lane));
      y += row_height + row_gap;
    }
    y += rank_gap;
  }
  auto x_of = [&](double t) { return left + std::clamp(end > 0 ? t / end : 0.0, 0.0, 1.0) * plot_width; };
  std::string bars;
  const bool tooltips = intervals.size() <= max_tooltips;
  for (const StepInterval& i : intervals) {
    if (i.rank >= max_ranks) continue;
    const double x0 = x_of(i.start), width = std::max(0.6, x_of(i.end) - x0);
    bars += fmt::format(R"~(<rect class="interval" x="{}" y="{}" width="{}" height="{}" fill="{}" data-rank="{}" data-lane="{}")~",
                        num(x0), num(top[{i.rank, i.lane}]), num(width), num(row_height), lane_color(i.lane, order(i.lane)),
                        i.rank, esc(i.lane));
    const std::string micro = i.micro_batch >= 0 ? fmt::format(" · micro-batch {}", i.micro_batch) : "";
    bars += tooltips ? fmt::format("><title>rank {} · {} · {}{} · {} – {}</title></rect>", i.rank, esc(i.lane), esc(i.what),
                                   micro, short_time(i.start), short_time(i.end))
                     : "/>";
  }
  std::string axis = fmt::format(R"~(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#5f6b7a"/>)~", num(left), num(axis_height - 6),
                                 num(left + plot_width), num(axis_height - 6));
  for (double tick : nice_ticks(0, end, 6))
    axis += fmt::format(R"~(<text x="{}" y="{}" class="small" text-anchor="middle">{}</text>)~", num(x_of(tick)),
                        num(axis_height - 12), short_time(tick));
  return fmt::format(R"~(<svg xmlns="http://www.w3.org/2000/svg" class="lanes" width="{}" height="{}" viewBox="0 0 {} {}">)~",
                     num(left + plot_width + 20), num(y), num(left + plot_width + 20), num(y)) +
         axis + labels + bars + "</svg>\n";
}

std::string lanes_section(const json& parallel, const std::string& source) {
  const std::vector<StepInterval> intervals = intervals_from_trace(parallel, source);
  const int workers = parallel.at("layout").at("workers").get<int>();
  std::string lead = "One lane per communicator per rank (the intervals Perfetto draws): ";
  lead += parallel.contains("step") ? "compute, the tensor, pipeline and expert waits of the compute stream, and the "
                                      "data-parallel stream's collectives."
                                    : "each collective from its group's first rank in to its last rank out.";
  if (workers > max_ranks) lead += fmt::format(" Ranks 0–{} of {}.", max_ranks - 1, workers);
  return "<section id=\"lanes\"><h2>Lanes</h2>\n<p class=\"lead\">" + esc(lead) + "</p>\n" +
         lanes_svg(intervals, parallel.at("step_time").get<double>()) + "</section>\n";
}

std::string page(const json& trace, const std::string& source) {
  const json& parallel = trace.at("parallel");
  const json& layout = parallel.at("layout");
  const std::string name = trace.at("scenario").at("name").get<std::string>();
  const std::string what = fmt::format("tensor {} x pipeline {} x data {} = {} workers (expert groups of {}) on {}",
                                       layout.at("tensor").get<int>(), layout.at("pipeline").get<int>(),
                                       layout.at("data").get<int>(), layout.at("workers").get<int>(),
                                       layout.at("expert").get<int>(), trace.at("platform").at("source").get<std::string>());
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += fmt::format("<title>collsim report: {}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n", esc(name), report_css);
  html += fmt::format("<header><h1>{}</h1><p>{}</p></header>\n", esc(name), esc(what));
  html += "<section id=\"summary\"><h2>Summary</h2>\n";
  html += parallel.contains("step") ? step_summary(parallel) : plain_summary(parallel);
  if (parallel.contains("stalled")) html += "<p class=\"lead\">Stalled: " + esc(parallel.at("stalled").get<std::string>()) + "</p>\n";
  html += "</section>\n<section id=\"communicators\"><h2>Communicators</h2>\n" + communicator_table(parallel) + "</section>\n";
  html += lanes_section(parallel, source);
  html += fmt::format("<footer>Written by collsim {} from a parallel run's trace ({}). Times are simulated seconds.</footer>\n",
                      esc(trace.at("collsim_version").get<std::string>()), esc(source));
  return html + "</main>\n</body>\n</html>\n";
}

}  // namespace

std::string parallel_html_report(const json& trace, const std::string& source) {
  try {
    return page(trace, source);
  } catch (const json::exception& error) {
    throw InputError(fmt::format("{}: not a parallel trace collsim reads: {}", source, error.what()));
  }
}

std::string parallel_lanes_svg(const json& trace, const std::string& source) {
  try {
    const json& parallel = trace.at("parallel");
    std::string svg = lanes_svg(intervals_from_trace(parallel, source), parallel.at("step_time").get<double>());
    // standalone: its own font and background, and what it shows, in place of the report's page around it
    const std::string head = fmt::format(
        "<style>text{{font-family:system-ui,sans-serif;fill:#1f2933}}.small{{font-size:11px}}</style>"
        "<rect width=\"100%\" height=\"100%\" fill=\"white\"/><title>{}: one lane per communicator per rank</title>",
        esc(trace.at("scenario").at("name").get<std::string>()));
    svg.insert(svg.find('>') + 1, head);
    return svg;
  } catch (const json::exception& error) {
    throw InputError(fmt::format("{}: not a parallel trace collsim reads: {}", source, error.what()));
  }
}

}  // namespace collsim::viz
