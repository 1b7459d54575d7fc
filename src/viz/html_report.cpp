#include "viz/html_report.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <optional>

#include "algorithms/registry.hpp"
#include "util/errors.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"
#include "viz/charts.hpp"
#include "viz/report_assets.hpp"
#include "viz/step_through.hpp"
#include "viz/svg.hpp"
#include "viz/timeline_svg.hpp"

namespace collsim::viz {

using nlohmann::json;

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
    html += "<nav><a href=\"#summary\">Summary</a><a href=\"#timeline\">Timeline</a><a href=\"#rounds\">Rounds</a>";
    if (!t_.recovery.empty()) html += "<a href=\"#recovery\">Recovery</a>";
    html += "<a href=\"#links\">Links</a><a href=\"#steps\">Step by step</a></nav>\n";
    html += summary();
    html += timeline();
    html += rounds();
    html += recovery();
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

  // The platform's tightest cut, when it binds more than the ranks' own links do.
  bool tighter_topology_bound() const {
    return t_.summary.contains("topology_cut") && number("topology_bound").value_or(0) > number("lower_bound").value_or(0) * (1 + 1e-9);
  }

  std::string topology_bound_row() const {
    const auto bound = number("topology_bound");
    if (!bound) return "";
    if (!tighter_topology_bound()) return row("topology bound", format_time(*bound) + " (no cut of the platform is tighter than the lower bound)");
    const json& cut = t_.summary["topology_cut"];
    return row("topology bound", fmt::format("{} (cut {}: {} at {}, through {})", format_time(*bound), cut.value("cut", std::string()),
                                             format_size(cut.value("bytes", 0.0)), format_bandwidth(cut.value("capacity", 0.0)),
                                             join(cut.value("bottleneck_links", std::vector<std::string>{}), ", ")));
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
    if (auto v = number("topology_efficiency"); v && tighter_topology_bound())
      out += card(fmt::format("{:.1f}%", *v * 100), "of the topology bound");
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
    out += topology_bound_row();
    if (auto v = number("efficiency")) {
      std::string text = fmt::format("{:.1f}% of the lower bound", *v * 100);
      if (auto topology = number("topology_efficiency")) text += fmt::format(", {:.1f}% of the topology bound", *topology * 100);
      out += row("efficiency", text);
    }
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

  // What recovery decided, one row per decision (the CLI summary's "recovery" lines).
  std::string recovery() const {
    if (t_.recovery.empty()) return "";
    std::string out = "<section id=\"recovery\"><h2>Recovery</h2>\n<p class=\"lead\">Each decision of the coordinator: "
                      "when the fault struck, when a wait passed its deadline or a rank fell behind (detected), when the "
                      "group was rebuilt and the survivors resumed, and what the model predicted for the rounds left.</p>\n";
    out += "<table><tr><th class=\"num\">epoch</th><th class=\"num\">round</th><th class=\"num\">fault</th>"
           "<th class=\"num\">detected</th><th class=\"num\">rebuilt</th><th class=\"num\">resumed</th>"
           "<th class=\"num\">round done</th><th>decision</th><th>why</th><th class=\"num\">keep (predicted)</th>"
           "<th class=\"num\">drop (predicted)</th></tr>\n";
    auto time_or_dash = [](const std::optional<double>& v) { return v ? format_time(*v) : std::string("-"); };
    auto ranks = [](const char* what, const std::vector<int>& list) {
      std::vector<std::string> names;
      for (int rank : list) names.push_back(std::to_string(rank));
      return fmt::format("{} rank{} {}", what, list.size() == 1 ? "" : "s", join(names, ", "));
    };
    for (const auto& r : t_.recovery) {
      std::string decision = !r.dropped_ranks.empty()     ? ranks("dropped", r.dropped_ranks)
                             : !r.joined_ranks.empty()    ? ranks("joined", r.joined_ranks)
                             : !r.kept_ranks.empty()      ? ranks("kept", r.kept_ranks)
                             : !r.undecided_ranks.empty() ? ranks("undecided between", r.undecided_ranks)
                             : r.rebuilds()               ? "the same ranks redo the round"
                                                          : "nobody dropped";
      const bool rebuilt = r.epoch_after > r.epoch_before;
      out += fmt::format("<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                         rebuilt ? fmt::format("{} → {}", r.epoch_before, r.epoch_after) : std::to_string(r.epoch_before),
                         r.round, esc(time_or_dash(r.fault_time)), esc(format_time(r.detected)),
                         esc(rebuilt ? format_time(r.rebuilt) : "-"), esc(time_or_dash(r.resumed)),
                         esc(time_or_dash(r.round_completed)), esc(decision), esc(r.reason),
                         esc(r.prediction ? format_time(r.prediction->first) : "-"),
                         esc(r.prediction ? format_time(r.prediction->second) : "-"));
    }
    return out + "</table>\n</section>\n";
  }

  // The links' lead: the bottleneck the bounds name, or the most loaded link.
  std::string links_lead(const std::vector<const TraceLink*>& order) const {
    const TraceLink& top = *order.front();
    const double run = std::max(t_.simulated_time, 1e-12);
    const std::vector<std::string> named = bottleneck_link_names(t_);
    const json& s = t_.summary;
    std::string lead;
    if (s.contains("topology_cut") && !named.empty() && number("topology_bound") > number("lower_bound").value_or(0) * (1 + 1e-9)) {
      const json& cut = s["topology_cut"];
      lead = fmt::format("The topology bound names the bottleneck: at least {} must cross <b>{}</b> ({}), {} at the "
                         "least; no algorithm does better on this platform. ",
                         esc(format_size(cut.value("bytes", 0.0))), esc(join(named, ", ")),
                         esc(format_bandwidth(cut.value("capacity", 0.0))), esc(format_time(*number("topology_bound"))));
    }
    lead += fmt::format("The most loaded link, <b>{}</b>, carried {} in {} message{}: {:.0f}% of what its {} could carry "
                        "in the run; it was busy {:.0f}% of the time, up to {} flow{} at once.",
                        esc(top.name), esc(format_size(top.bytes)), thousands(top.flows), top.flows == 1 ? "" : "s",
                        100 * link_load(t_, top), esc(format_bandwidth(top.bandwidth)), 100 * top.busy_time / run,
                        top.peak_flows, top.peak_flows == 1 ? "" : "s");
    if (named.empty() && order.size() > 1 && link_load(t_, *order[1]) >= link_load(t_, top) * 0.999)
      lead += " Many links are as loaded: the load is spread evenly.";
    return "<p class=\"lead\">" + lead + "</p>\n";
  }

  std::string links() const {
    std::string out = "<section id=\"links\"><h2>Links</h2>\n";
    if (!t_.has_links)
      return out + "<p class=\"lead\">This trace has no <code>links</code> section (it was written by a collsim that "
                   "did not measure links yet): run the scenario again for link utilisation.</p></section>\n";
    if (t_.links.empty()) return out + "<p class=\"lead\">No message crossed a link.</p></section>\n";
    const std::vector<const TraceLink*> order = links_by_load(t_);
    const std::vector<std::string> named = bottleneck_link_names(t_);
    const double run = std::max(t_.simulated_time, 1e-12);
    out += links_lead(order);
    const std::string heatmap = link_heatmap_svg(t_);
    if (!heatmap.empty()) out += "<div class=\"figure\">" + heatmap + "</div>\n";
    out += "<table><tr><th>link</th><th class=\"num\">bandwidth</th><th class=\"num\">bytes</th>"
           "<th class=\"num\">messages</th><th class=\"num\">load</th><th class=\"num\">busy</th>"
           "<th class=\"num\">busy share</th><th class=\"num\">throughput while busy</th><th class=\"num\">peak flows</th></tr>\n";
    const size_t shown = std::min<size_t>(order.size(), heatmap_max_links);
    for (size_t i = 0; i < shown; ++i) {
      const auto& link = *order[i];
      const bool bottleneck = std::find(named.begin(), named.end(), link.name) != named.end();
      std::string bandwidth = format_bandwidth(link.bandwidth);
      for (const auto& [time, value] : link.bandwidth_changes)
        bandwidth += fmt::format(", {} from {}", format_bandwidth(value), format_time(time));
      out += fmt::format("<tr><td>{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{:.1f}%</td><td class=\"num\">{}</td><td class=\"num\">{:.1f}%</td>"
                         "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                         esc(link.name), bottleneck ? "<span class=\"badge\">bottleneck</span>" : "", esc(bandwidth),
                         esc(format_size(link.bytes)), thousands(link.flows), 100 * link_load(t_, link),
                         esc(format_time(link.busy_time)), link.busy_time / run * 100,
                         esc(link.busy_time > 0 ? format_bandwidth(link.bytes / link.busy_time) : "-"), link.peak_flows);
    }
    out += "</table>\n<p class=\"lead\">Load: the bytes a link carried over what its bandwidth could carry in the whole "
           "run. Busy: the time it carried anything, at whatever pace.</p>\n";
    if (shown < order.size())
      out += fmt::format("<p class=\"lead\">{} more links carried messages; the trace lists them all.</p>\n",
                         order.size() - shown);
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
