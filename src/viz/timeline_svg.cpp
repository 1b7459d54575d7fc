#include "viz/timeline_svg.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

#include "viz/iteration_lanes.hpp"
#include "viz/palette.hpp"
#include "util/units.hpp"
#include "viz/svg.hpp"

#include "viz/timeline_parts.hpp"

namespace collsim::viz::timeline {
namespace {

// Splits text into lines of at most `columns` characters, at spaces.
std::vector<std::string> wrap(const std::string& text, size_t columns) {
  std::vector<std::string> lines{""};
  size_t at = 0;
  while (at < text.size()) {
    size_t space = text.find(' ', at);
    if (space == std::string::npos) space = text.size();
    const std::string word = text.substr(at, space - at);
    if (!lines.back().empty() && lines.back().size() + 1 + word.size() > columns) lines.emplace_back();
    lines.back() += (lines.back().empty() ? "" : " ") + word;
    at = space + 1;
  }
  return lines;
}

}  // namespace

Timeline::Timeline(const TraceView& trace, const TimelineOptions& options)
    : t_(trace), o_(options), palette_(trace.phases), end_(std::max(trace.end_time(), 1e-12)) {
  plot_width_ = o_.width - left_ - right_;
  const int p = t_.workers;
  if (t_.per_step) {
    mode_ = Mode::per_step;
    lanes_ = std::max<int>(1, static_cast<int>(t_.phases.size()));
  } else if (p > o_.max_lanes) {
    mode_ = Mode::grouped;
    ranks_per_lane_ = (p + o_.max_lanes - 1) / o_.max_lanes;
    lanes_ = (p + ranks_per_lane_ - 1) / ranks_per_lane_;
  } else {
    mode_ = Mode::per_rank;
    lanes_ = p;
  }
  lane_height_ = std::clamp(560.0 / lanes_, 10.0, 34.0);
  if (mode_ == Mode::per_step) lane_height_ = 30;
}

std::string Timeline::render() {
  explain_mode();
  std::string body;
  double y = 22;
  body += fmt::format(R"~(<text x="{}" y="{}" class="title">{}</text>)~", num(left_ - 140), num(y),
                      esc(t_.name + ": " + describe_run(t_)));
  y += 19;
  body += fmt::format(R"~(<text x="{}" y="{}" class="subtitle">{}</text>)~", num(left_ - 140), num(y),
                      esc(describe_outcome(t_)));
  // Notes wrap at the picture's width; a long one (a stall's story) keeps its first four lines.
  const size_t columns = static_cast<size_t>((o_.width - 20) / 6.9);
  for (const auto& note : notes_) {
    const auto lines = wrap(note, columns);
    for (size_t i = 0; i < lines.size() && i < 4; ++i) {
      y += 16;
      const bool cut = i == 3 && lines.size() > 4;
      body += fmt::format(R"~(<text x="{}" y="{}" class="note">{}</text>)~", num(left_ - 140), num(y),
                          esc(cut ? lines[i] + " …" : lines[i]));
    }
  }
  y += 14;

  // Strips above the lanes: fault labels, rounds, recovery.
  const std::string fault_labels = draw_fault_labels(y);
  body += fault_labels;
  rounds_top_ = y;
  y += strip_height_;
  if (!t_.recovery.empty()) {
    recovery_top_ = y + 3;
    y += strip_height_ + 3;
  }
  lanes_top_ = y + 6;
  lanes_bottom_ = lanes_top_ + lanes_ * lane_height_;

  body += draw_round_backgrounds();
  body += draw_grid();
  body += draw_rounds_strip();
  body += draw_lane_labels();
  body += draw_compute();
  if (mode_ == Mode::per_step)
    body += draw_steps();
  else
    body += draw_messages();
  body += draw_recovery();
  body += draw_absences();
  body += draw_faults();
  IterationLanesPlace place;
  place.left = left_;
  place.plot_width = plot_width_;
  place.end = end_;
  place.top = lanes_bottom_ + 10;
  const IterationLanes iteration = iteration_lanes_svg(t_, place);
  body += iteration.svg;
  double bottom = draw_axis(body, iteration.svg.empty() ? lanes_bottom_ : iteration.bottom);
  bottom = draw_legend(body, bottom + 8);
  const double height = std::ceil(bottom + 10);

  std::string svg;
  if (o_.standalone) svg += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += fmt::format(
      R"~(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" class="collsim-timeline" )~"
      R"~(font-family="DejaVu Sans, Verdana, Helvetica, Arial, sans-serif" font-size="12" data-lanes="{2}" data-mode="{3}">)~"
      "\n",
      num(o_.width), num(height), lanes_, mode_name());
  svg += fmt::format("<title>{}</title>\n", esc("Timeline of " + t_.name + ": " + describe_run(t_)));
  svg += definitions();
  svg += fmt::format(R"~(<rect x="0" y="0" width="{}" height="{}" fill="#ffffff"/>)~", num(o_.width), num(height));
  svg += "\n" + body + "</svg>\n";
  return svg;
}

const char* Timeline::mode_name() const {
  return mode_ == Mode::per_rank ? "per-rank" : mode_ == Mode::grouped ? "grouped" : "per-step";
}

void Timeline::explain_mode() {
  const uint64_t shown = t_.messages.size();
  if (mode_ == Mode::per_step)
    notes_.push_back(fmt::format("{} messages in {} steps: one bar per step over all ranks, one lane per phase; {}.",
                                 thousands(t_.message_count), thousands(shown), describe_sample(t_)));
  if (mode_ == Mode::grouped)
    notes_.push_back(fmt::format("{} ranks in {} lanes of {}: a lane is coloured while any of its ranks sends (upper "
                                 "half) or receives (lower half).",
                                 t_.workers, lanes_, ranks_per_lane_));
  if (mode_ != Mode::per_step && shown > o_.max_arrows)
    notes_.push_back(fmt::format("{} messages: arrows are drawn up to {} messages.", thousands(shown), o_.max_arrows));
  if (mode_ == Mode::per_rank && shown > o_.merge_above)
    notes_.push_back("Touching bars of the same phase are merged into one.");
  if (!t_.stalled.empty()) notes_.push_back("Stalled: " + t_.stalled);
}

std::string Timeline::definitions() const {
  return fmt::format(
      "<defs>\n"
      R"~(<marker id="{0}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">)~"
      R"~(<path d="M0,0 L10,5 L0,10 z" fill="#3b4450"/></marker>)~"
      "\n"
      R"~(<pattern id="{1}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">)~"
      R"~(<rect width="6" height="6" fill="#eef0f3"/><line x1="0" y1="0" x2="0" y2="6" stroke="{2}" stroke-width="2.2"/></pattern>)~"
      "\n"
      R"~(<pattern id="{3}" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">)~"
      R"~(<line x1="0" y1="0" x2="0" y2="8" stroke="{4}" stroke-width="3" stroke-opacity="0.55"/></pattern>)~"
      "\n</defs>\n"
      "<style>.title{{font-size:16px;font-weight:bold;fill:#222831}} .subtitle{{font-size:12.5px;fill:#3b4450}} "
      ".note{{font-size:12px;fill:#8a4b00}} .label{{font-size:11px;fill:#222831}} .small{{font-size:10px;fill:#5f6b7a}} "
      ".axis{{font-size:11px;fill:#3b4450}} .edged{{stroke:#ffffff;stroke-width:0.6}}</style>\n",
      prefixed("arrow"), prefixed("wait"), colors::wait, prefixed("dropped"), colors::dropped);
}

// Alternate rounds get a faint band behind the lanes, so that rounds read apart.
std::string Timeline::draw_round_backgrounds() const {
  std::string out;
  if (t_.rounds.size() < 2) return out;
  for (size_t i = 1; i < t_.rounds.size(); i += 2) {
    const auto& r = t_.rounds[i];
    out += fmt::format(R"~(<rect x="{}" y="{}" width="{}" height="{}" fill="#f5f7fa"/>)~", num(x(r.start)),
                       num(lanes_top_), num(std::max(0.5, x(r.end) - x(r.start))), num(lanes_bottom_ - lanes_top_));
  }
  return out + "\n";
}

std::string Timeline::draw_grid() {
  std::string out;
  ticks_ = time_ticks(end_);
  for (double tick : ticks_)
    out += fmt::format(R"~(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="{3}" stroke-width="1"/>)~", num(x(tick)),
                       num(rounds_top_), num(lanes_bottom_), colors::grid);
  // Lane separators.
  for (int lane = 0; lane <= lanes_; ++lane)
    out += fmt::format(R"~(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#eef0f3" stroke-width="1"/>)~", num(left_),
                       num(left_ + plot_width_), num(lane_top(lane)));
  return out + "\n";
}

std::string Timeline::draw_rounds_strip() const {
  std::string out = fmt::format(R"~(<text x="{}" y="{}" class="small" text-anchor="end">rounds</text>)~", num(left_ - 8),
                                num(rounds_top_ + 13));
  for (size_t i = 0; i < t_.rounds.size(); ++i) {
    const auto& r = t_.rounds[i];
    const double x0 = x(r.start), width = std::max(1.0, x(r.end) - x0);
    out += fmt::format(R"~(<rect class="round" x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#ffffff" stroke-width="1" data-round="{}"><title>{}</title></rect>)~",
                       num(x0), num(rounds_top_ + 2), num(width), num(strip_height_ - 4),
                       i % 2 == 0 ? "#dfe5ec" : "#ccd5df", r.round,
                       esc(fmt::format("round {} (epoch {}): {} to {}, compute {}, collective {}", r.round, r.epoch,
                                       short_time(r.start), short_time(r.end), short_time(r.compute),
                                       short_time(r.collective))));
    std::string label = fmt::format("round {}", r.round);
    if (r.epoch > 0) label += fmt::format(" · epoch {}", r.epoch);
    if (width < label.size() * 6.2 + 6) label = std::to_string(r.round);
    if (width >= label.size() * 6.2 + 4)
      out += fmt::format(R"~(<text x="{}" y="{}" class="small" text-anchor="middle">{}</text>)~", num(x0 + width / 2),
                         num(rounds_top_ + 12.5), esc(label));
  }
  return out + "\n";
}

std::string Timeline::lane_label(int lane) const {
  if (mode_ == Mode::per_step) return t_.phases.empty() ? "" : t_.phases[static_cast<size_t>(lane)];
  if (mode_ == Mode::grouped) {
    const int first = lane * ranks_per_lane_, last = std::min(t_.workers, first + ranks_per_lane_) - 1;
    return fmt::format("ranks {}–{}", first, last);
  }
  return fmt::format("rank {}", lane);
}

std::string Timeline::draw_lane_labels() const {
  std::string out;
  // Label every lane when they are tall enough, otherwise every k-th.
  const int every = std::max(1, static_cast<int>(std::ceil(11.0 / lane_height_)));
  for (int lane = 0; lane < lanes_; ++lane) {
    const bool last_fits = lane == lanes_ - 1 && lane % every >= (every + 1) / 2;
    if (lane % every != 0 && !last_fits) continue;
    const double middle = lane_top(lane) + lane_height_ / 2 + 4;
    std::string host;
    if (mode_ == Mode::per_rank && lane_height_ >= 20 && static_cast<size_t>(lane) < t_.rank_hosts.size())
      host = t_.rank_hosts[static_cast<size_t>(lane)];
    out += fmt::format(R"~(<text x="{}" y="{}" class="label lane-label" text-anchor="end" data-lane="{}">{})~",
                       num(left_ - 8), num(host.empty() ? middle : middle - 5), lane, esc(lane_label(lane)));
    out += "</text>";
    if (!host.empty())
      out += fmt::format(R"~(<text x="{}" y="{}" class="small" text-anchor="end">{}</text>)~", num(left_ - 8),
                         num(middle + 6), esc(host));
  }
  return out + "\n";
}

std::string Timeline::draw_compute() {
  std::string out;
  for (const auto& r : t_.rounds) {
    if (r.compute <= 0) continue;
    computes_ = true;
    std::vector<bool> drawn(static_cast<size_t>(lanes_), false);
    for (int rank : r.group) {
      const int lane = mode_ == Mode::per_step ? 0 : lane_of_rank(rank);
      if (lane < 0 || lane >= lanes_ || drawn[static_cast<size_t>(lane)]) continue;
      drawn[static_cast<size_t>(lane)] = true;
      const int lanes_covered = mode_ == Mode::per_step ? lanes_ : 1;
      out += fmt::format(R"~(<rect class="compute" x="{}" y="{}" width="{}" height="{}" fill="{}" data-round="{}"/>)~",
                         num(x(r.start)), num(lane_top(lane) + 1.5),
                         num(std::max(0.6, x(r.start + r.compute) - x(r.start))),
                         num(lane_height_ * lanes_covered - 3), colors::compute, r.round);
    }
  }
  return out + "\n";
}

// Sorts spans by start and, when asked, merges touching spans of one phase.
std::vector<Span> Timeline::arrange(std::vector<Span> spans, bool merge) const {
  std::stable_sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  if (!merge) return spans;
  const double tolerance = 0.6 * seconds_per_pixel();
  std::vector<Span> merged;
  std::map<int, size_t> open;  // phase -> index of its last merged span
  for (const Span& span : spans) {
    const auto it = open.find(span.phase);
    if (it != open.end() && span.start <= merged[it->second].end + tolerance) {
      Span& into = merged[it->second];
      into.end = std::max(into.end, span.end);
      into.messages += span.messages;
      into.message = nullptr;
      continue;
    }
    open[span.phase] = merged.size();
    merged.push_back(span);
  }
  return merged;
}

std::string Timeline::span_rect(const Span& span, double y, double height, const std::string& fill, const char* kind,
                      bool tooltips) const {
  const double x0 = x(span.start), width = std::max(0.8, x(span.end) - x0);
  // Wide bars get a thin white outline (class "edged") so that consecutive steps read apart;
  // data-messages is left out when the bar is one message.
  std::string out = fmt::format(R"~(<rect class="span {}{}" x="{}" y="{}" width="{}" height="{}" fill="{}" data-phase="{}")~",
                                kind, width > 3 ? " edged" : "", num(x0), num(y), num(width), num(height), fill,
                                esc(t_.phases[static_cast<size_t>(span.phase)]));
  if (span.messages != 1) out += fmt::format(R"~( data-messages="{}")~", span.messages);
  const TraceMessage* m = span.message;
  if (m != nullptr && mode_ != Mode::per_step)
    out += fmt::format(R"~( data-src="{}" data-dst="{}" data-step="{}")~", m->src, m->dst, m->step);
  else if (m != nullptr)
    out += fmt::format(R"~( data-step="{}")~", m->step);
  if (!tooltips) return out + "/>";
  std::string tip;
  const std::string& phase = t_.phases[static_cast<size_t>(span.phase)];
  if (m != nullptr && mode_ != Mode::per_step)
    tip = fmt::format("rank {} → {} · {} step {} · {} · {} – {}", m->src, m->dst, phase, m->step,
                      format_size(m->bytes, 3), short_time(m->start), short_time(m->end));
  else if (m != nullptr)
    tip = fmt::format("{} step {} · {} messages · {} · {} – {}", phase, m->step, thousands(m->count),
                      format_size(m->bytes, 3), short_time(m->start), short_time(m->end));
  else
    tip = fmt::format("{} · {} messages · {} – {}", phase, thousands(span.messages), short_time(span.start),
                      short_time(span.end));
  return out + "><title>" + esc(tip) + "</title></rect>";
}

std::string Timeline::draw_messages() {
  std::string out;
  const size_t count = t_.messages.size();
  const bool tooltips = count <= o_.max_tooltips;
  const bool merge = mode_ == Mode::grouped || count > o_.merge_above;
  std::vector<std::vector<Span>> sends(static_cast<size_t>(lanes_)), receives(static_cast<size_t>(lanes_));
  for (const auto& m : t_.messages) {
    const Span span{m.start, m.end, m.phase, 1, &m};
    sends[static_cast<size_t>(lane_of_rank(m.src))].push_back(span);
    receives[static_cast<size_t>(lane_of_rank(m.dst))].push_back(span);
    used_phases_.insert(m.phase);
  }
  if (mode_ == Mode::per_rank) out += draw_waits(sends, receives);
  for (int lane = 0; lane < lanes_; ++lane) {
    const auto sent = arrange(sends[static_cast<size_t>(lane)], merge);
    const auto received = arrange(receives[static_cast<size_t>(lane)], merge);
    for (const Span& span : sent)
      out += span_rect(span, send_row(lane), row_height(), palette_.color(span.phase), "send", tooltips);
    for (const Span& span : received)
      out += span_rect(span, recv_row(lane), row_height(), palette_.light(span.phase), "recv", tooltips);
    if (mode_ == Mode::per_rank) {
      out += overlap_counts(sent, send_row(lane), "#ffffff");
      out += overlap_counts(received, recv_row(lane), colors::text);
    }
    out += "\n";
  }
  if (mode_ == Mode::per_rank) out += draw_overheads();
  // A reduction happens when a message of a reducing phase arrives; it takes no simulated time.
  if (mode_ == Mode::per_rank && count <= 4 * o_.max_tooltips) {
    for (const auto& m : t_.messages) {
      if (!phase_reduces(t_.phases[static_cast<size_t>(m.phase)])) continue;
      if (x(m.end) - x(m.start) < 6) continue;  // no room: the mark would hide the bar
      reductions_ = true;
      out += fmt::format(R"~(<rect class="reduce" x="{}" y="{}" width="1.6" height="{}" fill="{}"/>)~",
                         num(x(m.end) - 0.8), num(recv_row(m.dst) - 1), num(row_height() + 2), colors::reduce);
    }
    out += "\n";
  }
  if (mode_ == Mode::per_rank && count <= o_.max_arrows) {
    for (const auto& m : t_.messages) {
      arrows_ = true;
      out += fmt::format(
          R"~(<line class="arrow" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1" stroke-opacity="0.7" marker-end="url(#{})"/>)~",
          num(x(m.start)), num(send_row(m.src) + row_height() / 2), num(x(m.end)),
          num(recv_row(m.dst) + row_height() / 2), palette_.dark(m.phase), prefixed("arrow"));
    }
    out += "\n";
  }
  return out;
}

// Messages of one rank that overlap in time are drawn over each other: say how many
// share the bar ("×7" for the root of a flat reduce).
std::string Timeline::overlap_counts(const std::vector<Span>& spans, double y, const char* color) const {
  std::string out;
  if (row_height() < 8) return out;
  for (size_t i = 0; i < spans.size();) {
    size_t j = i + 1;
    double end = spans[i].end;
    while (j < spans.size() && spans[j].start < end - 1e-12 * end) end = std::max(end, spans[j++].end);
    const double width = x(end) - x(spans[i].start);
    // "at once" only when they also start together; staggered ones (posted o apart) are in flight together
    const bool together = spans[j - 1].start - spans[i].start <= 0.5 * seconds_per_pixel();
    if (j - i >= 2 && width > 60)
      out += fmt::format(R"~(<text class="small overlap" x="{}" y="{}" text-anchor="middle" font-weight="bold" style="fill:{}" font-size="{}">{} {}</text>)~",
                         num(x(spans[i].start) + width / 2), num(y + row_height() - 1.5), color,
                         num(std::min(11.0, row_height())), j - i,
                         together ? "at once" : fmt::format("in flight, started {} apart", short_time((spans[j - 1].start - spans[i].start) / static_cast<double>(j - i - 1))));
    i = j;
  }
  return out;
}

// Between entering the collective and its last transfer of a round, a rank that neither
// sends nor receives waits for a peer.
std::string Timeline::draw_waits(const std::vector<std::vector<Span>>& sends, const std::vector<std::vector<Span>>& receives) {
  std::string out;
  const double minimum = 0.5 * seconds_per_pixel();
  for (const auto& round : t_.rounds) {
    const double entered = round.start + round.compute;
    for (int rank : round.group) {
      if (rank < 0 || rank >= lanes_) continue;
      std::vector<std::pair<double, double>> busy;
      // a send keeps its rank busy from its overhead on
      for (const Span& span : sends[static_cast<size_t>(rank)])
        if (span.message->round == round.round) busy.emplace_back(span.start - t_.overhead, span.end);
      for (const Span& span : receives[static_cast<size_t>(rank)])
        if (span.message->round == round.round) busy.emplace_back(span.start, span.end);
      if (busy.empty()) continue;
      std::sort(busy.begin(), busy.end());
      double cursor = entered;
      for (const auto& [start, end] : busy) {
        if (start - cursor > minimum) out += wait_rect(rank, cursor, start);
        cursor = std::max(cursor, end);
      }
    }
  }
  return out + "\n";
}

// LogP's overhead: a sender spends o before each message leaves, so that the messages it
// posts leave o apart. A dark strip along the top of the send row, [start - o, start].
std::string Timeline::draw_overheads() {
  std::string out;
  // (not when o is under two pixels: a legend entry for marks nobody can see would mislead)
  if (t_.overhead < 2 * seconds_per_pixel() || t_.messages.size() > o_.max_tooltips) return out;
  for (const auto& m : t_.messages) {
    overheads_ = true;
    const double x0 = x(m.start - t_.overhead);
    out += fmt::format(R"~(<rect class="overhead" x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#ffffff" stroke-width="0.5"><title>{}</title></rect>)~",
                       num(x0), num(send_row(m.src)), num(std::max(0.6, x(m.start) - x0)), num(row_height() * 0.35),
                       colors::overhead,
                       esc(fmt::format("rank {} posts its message to rank {}: overhead {} ({} – {})", m.src, m.dst,
                                       short_time(t_.overhead), short_time(m.start - t_.overhead), short_time(m.start))));
  }
  return out + "\n";
}

std::string Timeline::wait_rect(int lane, double from, double to) {
  waits_ = true;
  return fmt::format(
      R"~(<rect class="wait" x="{}" y="{}" width="{}" height="{}" fill="url(#{})"><title>{}</title></rect>)~",
      num(x(from)), num(lane_top(lane) + lane_height_ * 0.3), num(std::max(0.6, x(to) - x(from))),
      num(lane_height_ * 0.4), prefixed("wait"),
      esc(fmt::format("rank {} waits {} ({} – {})", lane, short_time(to - from), short_time(from), short_time(to))));
}

std::string Timeline::draw_steps() {
  std::string out;
  std::vector<std::vector<Span>> lanes(static_cast<size_t>(lanes_));
  for (const auto& m : t_.messages) {
    lanes[static_cast<size_t>(m.phase)].push_back(Span{m.start, m.end, m.phase, m.count, &m});
    used_phases_.insert(m.phase);
  }
  const double narrow = 2 * seconds_per_pixel();
  for (int lane = 0; lane < lanes_; ++lane) {
    // Steps narrower than two pixels merge with their neighbours.
    std::vector<Span> spans = arrange(lanes[static_cast<size_t>(lane)], false), merged;
    for (const Span& span : spans) {
      if (!merged.empty() && (span.end - span.start < narrow || merged.back().end - merged.back().start < narrow) &&
          span.start <= merged.back().end + narrow) {
        merged.back().end = std::max(merged.back().end, span.end);
        merged.back().messages += span.messages;
        merged.back().steps += span.steps;
        merged.back().message = nullptr;
      } else {
        merged.push_back(span);
      }
    }
    for (size_t i = 0; i < merged.size(); ++i) {
      const Span& span = merged[i];
      const std::string& fill = i % 2 == 0 ? palette_.color(span.phase) : tint(palette_.color(span.phase), 0.25);
      out += span_rect(span, lane_top(lane) + 2, lane_height_ - 4, fill, "step", merged.size() <= o_.max_tooltips);
      const double width = x(span.end) - x(span.start);
      const std::string label = span.message != nullptr
                                    ? fmt::format("step {}", span.message->step)
                                    : fmt::format("{} steps · {} messages", thousands(span.steps),
                                                  thousands(span.messages));
      if (width > label.size() * 6.5 + 8)
        out += fmt::format(R"~(<text class="small" x="{}" y="{}" text-anchor="middle" style="fill:#ffffff">{}</text>)~",
                           num(x(span.start) + width / 2), num(lane_top(lane) + lane_height_ / 2 + 3.5), esc(label));
    }
    out += "\n";
  }
  return out;
}

double Timeline::draw_axis(std::string& out, double y) const {
  out += time_axis_svg(left_, plot_width_, y, end_);
  return y + 40;
}

double Timeline::draw_legend(std::string& out, double top) const {
  std::vector<LegendItem> items;
  for (size_t phase = 0; phase < t_.phases.size(); ++phase) {
    if (!used_phases_.count(static_cast<int>(phase))) continue;
    const int i = static_cast<int>(phase);
    if (mode_ == Mode::per_step)
      items.push_back({fmt::format(R"~(<rect width="14" height="10" fill="{}"/>)~", palette_.color(i)), t_.phases[phase]});
    else
      items.push_back({fmt::format(R"~(<rect width="14" height="5" fill="{}"/><rect y="5" width="14" height="5" fill="{}"/>)~",
                                   palette_.color(i), palette_.light(i)),
                       t_.phases[phase] + " (send / receive)"});
  }
  if (computes_)
    items.push_back({fmt::format(R"~(<rect width="14" height="10" fill="{}"/>)~", colors::compute),
                     "compute (until the round's last rank is done)"});
  if (overheads_)
    items.push_back({fmt::format(R"~(<rect width="14" height="4" fill="{}"/>)~", colors::overhead),
                     fmt::format("overhead o = {} before each message leaves", short_time(t_.overhead))});
  if (waits_)
    items.push_back({fmt::format(R"~(<rect y="2" width="14" height="6" fill="url(#{})"/>)~", prefixed("wait")),
                     "waiting for a peer"});
  if (reductions_)
    items.push_back({fmt::format(R"~(<rect x="6" width="2" height="10" fill="{}"/>)~", colors::reduce),
                     "reduce on arrival (no simulated time)"});
  if (arrows_)
    items.push_back({fmt::format(R"~(<line x1="0" y1="9" x2="13" y2="1" stroke="#3b4450" marker-end="url(#{})"/>)~",
                                 prefixed("arrow")),
                     "message"});
  if (!t_.faults.empty())
    items.push_back({fmt::format(R"~(<line x1="7" y1="0" x2="7" y2="10" stroke="{}" stroke-width="1.5" stroke-dasharray="3 2"/>)~",
                                 colors::fault),
                     "fault"});
  if (undetected_)
    items.push_back({fmt::format(R"~(<rect width="14" height="10" fill="{}"/>)~", colors::undetected),
                     "fault not yet felt (no collective running)"});
  if (detection_)
    items.push_back({fmt::format(R"~(<rect width="14" height="10" fill="{}"/>)~", colors::detection),
                     "detection (waiting for a deadline)"});
  if (rebuild_) items.push_back({fmt::format(R"~(<rect width="14" height="10" fill="{}"/>)~", colors::rebuild), "rebuild"});
  if (resume_) items.push_back({fmt::format(R"~(<rect width="14" height="10" fill="{}"/>)~", colors::resume), "resume"});
  if (dropped_)
    items.push_back({fmt::format(R"~(<rect width="14" height="10" fill="url(#{})"/>)~", prefixed("dropped")),
                     "out of the group"});
  double cx = left_, cy = top;
  out += R"~(<g class="legend">)~";
  for (const auto& item : items) {
    const double width = 22 + item.label.size() * 6.3 + 16;
    if (cx + width > o_.width - right_ && cx > left_) {
      cx = left_;
      cy += 18;
    }
    out += fmt::format(R"~(<g transform="translate({},{})">{}<text x="20" y="9.5" class="label">{}</text></g>)~", num(cx),
                       num(cy), item.swatch, esc(item.label));
    cx += width;
  }
  out += "</g>\n";
  return items.empty() ? top : cy + 14;
}

}  // namespace collsim::viz::timeline

namespace collsim::viz {

std::string timeline_svg(const TraceView& trace, const TimelineOptions& options) {
  return timeline::Timeline(trace, options).render();
}

}  // namespace collsim::viz
