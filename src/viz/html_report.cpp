#include "viz/html_report.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <optional>

#include "algorithms/registry.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"
#include "viz/charts.hpp"
#include "viz/report_assets.hpp"
#include "viz/step_through.hpp"
#include "viz/svg.hpp"
#include "viz/timeline_svg.hpp"

namespace collsim::viz {
namespace {

// Whether the run's algorithm reads collective.root (the registry says; an algorithm this
// collsim does not know: the rooted collectives).
bool uses_root(const TraceView& t) {
  try {
    return find_algorithm(parse_collective(t.kind, "scenario.collective.kind"), t.algorithm,
                          "scenario.collective.algorithm").uses.root;
  } catch (const InputError&) {
    return t.kind == "broadcast" || t.kind == "reduce";
  }
}

class Report {
public:
  explicit Report(const TraceView& trace) : t_(trace) {}

  std::string render() {
    std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    html += fmt::format("<title>collsim report: {}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n", esc(t_.name),
                        report_css);
    html += fmt::format("<header><h1>{}</h1><p>{}</p><p>{}</p></header>\n", esc(t_.name), esc(describe_run(t_)),
                        esc(describe_outcome(t_)));
    html += "<nav><a href=\"#summary\">Summary</a><a href=\"#timeline\">Timeline</a><a href=\"#rounds\">Rounds</a>"
            "<a href=\"#links\">Links</a><a href=\"#steps\">Step by step</a></nav>\n";
    html += summary();
    html += timeline();
    html += rounds();
    html += links();
    html += steps();
    html += fmt::format("<footer>Written by collsim {} from a collsim-trace/{} trace ({}). Times are simulated seconds; "
                        "sizes are the logical bytes the network carries.</footer>\n",
                        esc(t_.version), t_.format, esc(t_.source));
    html += "</main>\n";
    // The step-through's data, then its script; "</" is escaped so that no string closes the tag.
    std::string data = step_through_json(steps_, t_).dump();
    for (size_t at = data.find("</"); at != std::string::npos; at = data.find("</", at + 2)) data.replace(at, 2, "<\\/");
    html += "<script type=\"application/json\" id=\"steps-data\">" + data + "</script>\n";
    html += fmt::format("<script>{}</script>\n</body>\n</html>\n", report_script);
    return html;
  }

private:
  std::optional<double> number(const char* key) const {
    if (!t_.summary.contains(key) || !t_.summary[key].is_number()) return std::nullopt;
    return t_.summary[key].get<double>();
  }
  std::optional<bool> flag(const char* key) const {
    if (!t_.summary.contains(key) || !t_.summary[key].is_boolean()) return std::nullopt;
    return t_.summary[key].get<bool>();
  }

  static std::string card(const std::string& value, const std::string& label, const char* tone = "") {
    return fmt::format("<div class=\"card {}\"><div class=\"value\">{}</div><div class=\"label\">{}</div></div>", tone,
                       esc(value), esc(label));
  }
  static std::string row(const std::string& label, const std::string& value) {
    return fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", esc(label), esc(value));
  }

  std::string summary() const {
    std::string out = "<section id=\"summary\"><h2>Summary</h2>\n<div class=\"cards\">";
    out += card(format_time(t_.simulated_time), "simulated time (whole run)");
    if (auto v = number("collective_time")) out += card(format_time(*v), "one collective (mean over rounds)");
    if (auto v = number("efficiency")) out += card(fmt::format("{:.1f}%", *v * 100), "of the lower bound (efficiency)");
    if (auto v = number("busbw")) out += card(format_bandwidth(*v), "bus bandwidth");
    out += card(thousands(t_.message_count), "messages");
    if (auto v = flag("verified")) out += card(*v ? "yes" : "no", "result verified", *v ? "ok" : "bad");
    out += "</div>\n<table class=\"summary\">\n";
    std::string collective = t_.kind + " / " + t_.algorithm;
    if (uses_root(t_)) collective += fmt::format(" (root rank {})", t_.root);
    out += row("collective", collective);
    std::string ranks = std::to_string(t_.workers);
    if (!t_.rank_hosts.empty())
      ranks += fmt::format(" (rank 0 on {}{})", t_.rank_hosts.front(),
                           t_.rank_hosts.size() > 1 ? fmt::format(" … rank {} on {}", t_.rank_hosts.size() - 1,
                                                                  t_.rank_hosts.back())
                                                    : "");
    out += row("ranks", ranks);
    out += row("platform", t_.topology + ", " + t_.network + " network");
    out += row("size per rank", fmt::format("{} of {}, op {}", format_size(t_.size), t_.dtype, t_.op));
    out += row("simulated time", format_time(t_.simulated_time) + " (all rounds, computation included)");
    if (auto v = number("collective_time")) out += row("collective time", format_time(*v) + " per round (mean)");
    if (auto model = number("model_time")) {
      std::string text = format_time(*model) + " (alpha-beta formula)";
      if (auto c = number("collective_time"); c && *model > 0) text += fmt::format(", collective/model = {:.6f}", *c / *model);
      out += row("model time", text);
    }
    if (auto bound = number("lower_bound")) {
      std::string text = format_time(*bound);
      if (auto bw = number("lower_bound_bandwidth"), lat = number("lower_bound_latency"); bw && lat)
        text += fmt::format(" (bandwidth {}, latency {})", format_time(*bw), format_time(*lat));
      out += row("lower bound", text);
    }
    if (auto v = number("efficiency")) out += row("efficiency", fmt::format("{:.1f}% of the lower bound", *v * 100));
    if (auto a = number("algbw"), b = number("busbw"); a && b)
      out += row("algbw / busbw", format_bandwidth(*a) + " / " + format_bandwidth(*b));
    out += row("messages", thousands(t_.message_count) +
                               (t_.per_step ? " (" + describe_sample(t_) + ")" : " (each listed in the trace)"));
    if (auto v = flag("verified")) {
      std::string text = *v ? "yes" : "no";
      if (auto e = number("max_error")) text += fmt::format(", max error {:.3g}", *e);
      if (auto b = flag("bitwise_identical")) text += *b ? ", bitwise identical" : ", not bitwise identical";
      out += row("verified", text);
    }
    if (t_.rounds.size() > 1 || number("rounds_completed"))
      out += row("rounds", fmt::format("{} completed", t_.rounds.size()));
    if (auto lost = number("time_lost"))
      out += row("time lost", format_time(*lost) + fmt::format(" against the fault-free run ({})",
                                                               format_time(number("baseline_time").value_or(0))));
    if (auto timeout = number("timeout")) out += row("recovery timeout", format_time(*timeout) + " per wait");
    if (!t_.stalled.empty()) out += row("stalled", t_.stalled);
    out += "</table>\n";
    if (!t_.notes.empty()) {
      out += "<div class=\"notes\">";
      for (const auto& note : t_.notes) out += "<p>" + esc(note) + "</p>";
      out += "</div>\n";
    }
    return out + "</section>\n";
  }

  std::string timeline() const {
    TimelineOptions options;
    options.standalone = false;
    std::string lead = t_.per_step ? "One bar per step of all ranks, one lane per phase (the trace lists steps, not messages)."
                       : t_.workers > options.max_lanes
                           ? "Ranks share lanes at this scale: a lane is coloured while any of its ranks sends (upper "
                             "half) or receives (lower half)."
                           : "One lane per rank: what it sends (upper half) and receives (lower half), coloured by "
                             "phase; hover a bar for the message.";
    std::string out = "<section id=\"timeline\"><h2>Timeline</h2>\n<p class=\"lead\">" + esc(lead) + "</p>\n";
    out += "<div class=\"figure\">" + timeline_svg(t_, options) + "</div>\n";
    return out + "</section>\n";
  }

  std::string rounds() const {
    std::string out = "<section id=\"rounds\"><h2>Rounds</h2>\n";
    if (t_.rounds.empty()) return out + "<p class=\"lead\">No round completed.</p></section>\n";
    if (t_.rounds.size() > 1) out += "<div class=\"figure\">" + rounds_chart_svg(t_) + "</div>\n";
    out += "<table><tr><th class=\"num\">round</th><th class=\"num\">epoch</th><th class=\"num\">ranks</th>"
           "<th class=\"num\">start</th><th class=\"num\">time</th><th class=\"num\">compute</th>"
           "<th class=\"num\">collective</th></tr>\n";
    const size_t shown = std::min<size_t>(t_.rounds.size(), 200);
    for (size_t i = 0; i < shown; ++i) {
      const auto& r = t_.rounds[i];
      out += fmt::format("<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{}</td></tr>\n",
                         r.round, r.epoch, r.group.size(), format_time(r.start), format_time(r.end - r.start),
                         format_time(r.compute), format_time(r.collective));
    }
    out += "</table>\n";
    if (shown < t_.rounds.size()) out += fmt::format("<p class=\"lead\">… {} more rounds.</p>\n", t_.rounds.size() - shown);
    return out + "</section>\n";
  }

  std::string links() const {
    std::string out = "<section id=\"links\"><h2>Links</h2>\n";
    if (!t_.has_links)
      return out + "<p class=\"lead\">This trace has no <code>links</code> section (it was written by a collsim that "
                   "did not measure links yet): run the scenario again for link utilisation.</p></section>\n";
    if (t_.links.empty()) return out + "<p class=\"lead\">No message crossed a link.</p></section>\n";
    const TraceLink& top = t_.links.front();
    const double run = std::max(t_.simulated_time, 1e-12);
    size_t bottlenecks = 0;
    for (const auto& link : t_.links)
      if (link.busy_time >= top.busy_time * 0.999) ++bottlenecks;
    out += fmt::format(
        "<p class=\"lead\">The busiest link, <b>{}</b>, carried data {:.0f}% of the run ({} of {}), {} in {} "
        "message{}, up to {} at once.{}</p>\n",
        esc(top.name), top.busy_time / run * 100, esc(format_time(top.busy_time)), esc(format_time(t_.simulated_time)),
        esc(format_size(top.bytes)), thousands(top.flows), top.flows == 1 ? "" : "s", top.peak_flows,
        bottlenecks > 1 ? fmt::format(" {} links are as busy: the load is spread evenly.", bottlenecks)
                        : " It is the bottleneck: the other links wait on it.");
    const std::string heatmap = link_heatmap_svg(t_);
    if (!heatmap.empty()) out += "<div class=\"figure\">" + heatmap + "</div>\n";
    out += "<table><tr><th>link</th><th class=\"num\">bandwidth</th><th class=\"num\">bytes</th>"
           "<th class=\"num\">messages</th><th class=\"num\">busy</th><th class=\"num\">busy share</th>"
           "<th class=\"num\">throughput while busy</th><th class=\"num\">peak flows</th></tr>\n";
    const size_t shown = std::min<size_t>(t_.links.size(), heatmap_max_links);
    for (size_t i = 0; i < shown; ++i) {
      const auto& link = t_.links[i];
      const bool bottleneck = link.busy_time >= top.busy_time * 0.999 && bottlenecks == 1;
      std::string bandwidth = format_bandwidth(link.bandwidth);
      for (const auto& [time, value] : link.bandwidth_changes)
        bandwidth += fmt::format(", {} from {}", format_bandwidth(value), format_time(time));
      out += fmt::format("<tr><td>{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{}</td><td class=\"num\">{:.1f}%</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{}</td></tr>\n",
                         esc(link.name), bottleneck ? "<span class=\"badge\">bottleneck</span>" : "", esc(bandwidth),
                         esc(format_size(link.bytes)), thousands(link.flows), esc(format_time(link.busy_time)),
                         link.busy_time / run * 100,
                         esc(link.busy_time > 0 ? format_bandwidth(link.bytes / link.busy_time) : "-"), link.peak_flows);
    }
    out += "</table>\n";
    if (shown < t_.links.size())
      out += fmt::format("<p class=\"lead\">{} more links carried messages; the trace lists them all.</p>\n",
                         t_.links.size() - shown);
    return out + "</section>\n";
  }

  std::string steps() {
    steps_ = derive_step_through(t_);
    std::string out = "<section id=\"steps\"><h2>Step by step</h2>\n";
    if (!steps_.available) return out + "<p class=\"lead\">" + esc(steps_.why_not) + "</p></section>\n";
    out += "<p class=\"lead\">" + esc(steps_.note) + "</p>\n";
    out += R"~(<div class="stepper" id="stepper">
<div class="controls"><button class="first" title="First step">&#x00AB; First</button><button class="prev" title="Previous step (left arrow)">&#x25C0; Back</button><input type="range" min="0" max="0" value="0" aria-label="step"><button class="next" title="Next step (right arrow)">Next &#x25B6;</button><button class="last" title="Last step">Last &#x00BB;</button><button class="play">&#x25B6; Play</button></div>
<div class="where"></div>
<div class="panes"><div><svg class="diagram" xmlns="http://www.w3.org/2000/svg" width="380" height="360" viewBox="0 0 380 360" font-family="DejaVu Sans, Verdana, sans-serif"></svg>
<p class="said"></p><ul class="sent"></ul></div>
<div>)~";
    if (steps_.chunk_model) {
      out += "<table class=\"holds\"></table>\n<div class=\"key\">";
      out += fmt::format(
          "<span><span class=\"swatch\" style=\"background:#f4f5f7\"></span>nothing yet</span>"
          "<span><span class=\"swatch\" style=\"background:rgb(255,177,95)\"></span>{}</span>"
          "<span><span class=\"swatch\" style=\"background:#59a14f\"></span>final (&#x2713;)</span>"
          "<span><span class=\"swatch\" style=\"outline:2px solid #222831\"></span>changed in this step</span>"
          "<span><span class=\"swatch\" style=\"box-shadow:inset 0 -4px 0 #1f5fa8\"></span>sent in this step</span>",
          t_.kind == "broadcast" ? "partial" : fmt::format("partial: k/{} = contributions of k ranks", t_.workers));
      out += "</div>\n<p class=\"said\">Each cell: what a rank holds of a chunk after the step. In a circle on the "
             "left, a rank is green when it holds the whole result.</p>\n";
    } else {
      out += "<p class=\"said\">Without what each rank holds (see above), the diagram shows who sends to whom.</p>\n";
    }
    out += "</div></div>\n";
    out += print_steps();
    return out + "</div>\n</section>\n";
  }

  // Every step in a table, for paper (the stepper needs a screen).
  std::string print_steps() const {
    std::string out = "<div class=\"print-only\"><table><tr><th>step</th><th>time</th><th>messages</th></tr>\n";
    for (size_t f = 1; f < steps_.frames.size() && f <= 200; ++f) {
      const auto& frame = steps_.frames[f];
      std::string sent;
      for (size_t i = 0; i < frame.messages.size() && i < 32; ++i) {
        const auto& m = frame.messages[i];
        sent += fmt::format("{}{}→{}", i ? ", " : "", m.src, m.dst);
        if (!m.label.empty() && steps_.chunks > 1) sent += " " + m.label;
      }
      if (frame.messages.size() > 32) sent += fmt::format(", … {} more", frame.messages.size() - 32);
      out += fmt::format("<tr><td>{}</td><td>{} – {}</td><td>{}</td></tr>\n", esc(frame.label), esc(short_time(frame.start)),
                         esc(short_time(frame.end)), esc(sent));
    }
    return out + "</table></div>\n";
  }

  const TraceView& t_;
  StepThrough steps_;
};

}  // namespace

std::string html_report(const TraceView& trace) { return Report(trace).render(); }

}  // namespace collsim::viz
