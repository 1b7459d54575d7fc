// The timeline's faults and recovery: the strips above the lanes, the lines over them, the
// ranks out of the group (viz/timeline_parts.hpp).
#include "viz/timeline_parts.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

#include "util/units.hpp"
#include "viz/svg.hpp"

namespace collsim::viz::timeline {

std::string Timeline::draw_recovery() {
  std::string out;
  if (t_.recovery.empty()) return out;
  out += fmt::format(R"~(<text x="{}" y="{}" class="small" text-anchor="end">recovery</text>)~", num(left_ - 8),
                     num(recovery_top_ + 13));
  auto piece = [&](double from, double to, const char* color, const char* what, const std::string& tip) {
    const double x0 = x(from), width = std::max(2.0, x(to) - x0);
    return fmt::format(
        R"~(<rect class="recovery {}" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>)~", what,
        num(x0), num(recovery_top_ + 2), num(width), num(strip_height_ - 4), color, esc(tip));
  };
  std::vector<std::pair<std::string, double>> labels;  // text, right end
  std::vector<double> label_at, label_left;
  for (const auto& r : t_.recovery) {
    if (r.fault_time) {
      // Until the first collective after the fault begins, nothing waits on the faulty rank:
      // the fault is in effect but not yet felt. From then on a wait runs to its deadline.
      double felt = *r.fault_time;
      for (const auto& round : t_.rounds) {
        const double collective_start = round.start + round.compute;
        if (collective_start > *r.fault_time && collective_start < r.detected) {
          felt = collective_start;
          break;
        }
      }
      if (felt > *r.fault_time) {
        out += piece(*r.fault_time, felt, colors::undetected, "undetected",
                     fmt::format("the fault is in effect, but no collective runs yet: {} of computation", short_time(felt - *r.fault_time)));
        undetected_ = true;
      }
      out += piece(felt, r.detected, colors::detection, "detection",
                   fmt::format("detection: {} from the collective's start until a wait passed its deadline "
                               "(or a rank fell behind); {} after the fault", short_time(r.detected - felt),
                               short_time(r.detected - *r.fault_time)));
      detection_ = true;
    }
    out += piece(r.detected, r.rebuilt, colors::rebuild, "rebuild",
                 fmt::format("rebuild: {} until the coordinator announced epoch {}", short_time(r.rebuilt - r.detected),
                             r.epoch_after));
    if (r.resumed) {
      out += piece(r.rebuilt, *r.resumed, colors::resume, "resume",
                   fmt::format("resume: {} until the first survivor restarted", short_time(*r.resumed - r.rebuilt)));
      resume_ = true;
    }
    std::string what = fmt::format("epoch {}→{}", r.epoch_before, r.epoch_after);
    if (!r.dropped_ranks.empty()) {
      what += ": dropped rank";
      if (r.dropped_ranks.size() > 1) what += "s";
      for (size_t i = 0; i < r.dropped_ranks.size() && i < 6; ++i) what += fmt::format(" {}", r.dropped_ranks[i]);
      if (r.dropped_ranks.size() > 6) what += " …";
    }
    if (!r.joined_ranks.empty()) what += fmt::format(": rank {} rejoins", r.joined_ranks.front());
    else if (r.dropped_ranks.empty() && r.rebuilds()) what += ": the same ranks redo it";
    // Events close together share one label.
    const double after = x(r.resumed.value_or(r.rebuilt)) + 5;
    if (!labels.empty() && after < labels.back().second + 10) {
      labels.back().first += "; " + what;
      labels.back().second += what.size() * 6.0 + 12;
    } else {
      labels.emplace_back(what, after + what.size() * 6.0);
      label_at.push_back(after);
      label_left.push_back(x(r.fault_time.value_or(r.detected)) - 5);
    }
    rebuild_ = true;
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    const bool room_right = labels[i].second < left_ + plot_width_;
    out += fmt::format(R"~(<text x="{}" y="{}" class="small" text-anchor="{}">{}</text>)~",
                       num(room_right ? label_at[i] : label_left[i]), num(recovery_top_ + 12.5),
                       room_right ? "start" : "end", esc(labels[i].first));
  }
  return out + "\n";
}

std::string Timeline::draw_absences() {
  std::string out;
  // A rank is out of the group while its host is preempted (until it returns) and from
  // the rebuild that drops it until it rejoins.
  std::map<int, std::vector<std::pair<double, double>>> away;
  std::map<int, double> out_since;
  for (const auto& r : t_.recovery) {
    for (int rank : r.joined_ranks)
      if (auto it = out_since.find(rank); it != out_since.end()) {
        away[rank].emplace_back(it->second, r.rebuilt);
        out_since.erase(it);
      }
    for (int rank : r.dropped_ranks) out_since.emplace(rank, r.rebuilt);
  }
  for (const auto& [rank, since] : out_since) away[rank].emplace_back(since, end_);
  for (const auto& f : t_.faults) {
    if (f.kind != "preempt" || f.action != "applied") continue;
    double back = end_;
    for (const auto& later : t_.faults)
      if (later.fault == f.fault && later.action == "returned" && later.time >= f.time) back = later.time;
    for (int rank : f.ranks) away[rank].emplace_back(f.time, back);
  }
  std::vector<std::tuple<int, double, double>> absences;
  for (auto& [rank, spans] : away) {
    std::sort(spans.begin(), spans.end());
    for (const auto& [from, to] : spans) {
      if (!absences.empty() && std::get<0>(absences.back()) == rank && from <= std::get<2>(absences.back()))
        std::get<2>(absences.back()) = std::max(std::get<2>(absences.back()), to);
      else
        absences.emplace_back(rank, from, to);
    }
  }
  for (const auto& [rank, from, to] : absences) {
    if (rank < 0 || rank >= t_.workers || mode_ == Mode::per_step) continue;
    const int lane = lane_of_rank(rank);
    dropped_ = true;
    out += fmt::format(R"~(<rect class="dropped" x="{}" y="{}" width="{}" height="{}" fill="url(#{})"><title>{}</title></rect>)~",
                       num(x(from)), num(lane_top(lane) + 1), num(std::max(1.0, x(to) - x(from))),
                       num(lane_height_ - 2), prefixed("dropped"),
                       esc(fmt::format("rank {} out of the group from {} to {}", rank, short_time(from),
                                       short_time(to))));
    if (x(to) - x(from) > 60 && lane_height_ >= 14)
      out += fmt::format(R"~(<text x="{}" y="{}" class="small">out of the group</text>)~", num(x(from) + 4),
                         num(lane_top(lane) + lane_height_ / 2 + 3.5));
  }
  return out + "\n";
}

// Fault labels sit above the rounds strip, staggered on up to three rows; the lines are
// drawn over the lanes later.
std::string Timeline::draw_fault_labels(double& y) {
  std::string out;
  if (t_.faults.empty()) return out;
  std::vector<double> row_ends;
  std::vector<std::pair<size_t, int>> placed;  // fault index, row
  for (size_t i = 0; i < t_.faults.size(); ++i) {
    const auto& f = t_.faults[i];
    const std::string label = fault_label(f);
    const double start = x(f.time) - 4, width = label.size() * 6.0 + 10;
    int row = 0;
    while (row < static_cast<int>(row_ends.size()) && row_ends[static_cast<size_t>(row)] > start) ++row;
    if (row >= 3) row = 2;
    if (row >= static_cast<int>(row_ends.size())) row_ends.push_back(0);
    row_ends[static_cast<size_t>(row)] = start + width;
    placed.emplace_back(i, row);
  }
  const double top = y;
  for (const auto& [i, row] : placed) {
    const auto& f = t_.faults[i];
    const double label_y = top + 11 + row * 14;
    const std::string label = fault_label(f);
    const bool flip = x(f.time) + label.size() * 6.0 > left_ + plot_width_;
    out += fmt::format(R"~(<text x="{}" y="{}" class="small fault-label" fill="{}" style="fill:{}" text-anchor="{}">{}</text>)~",
                       num(flip ? x(f.time) - 6 : x(f.time) + 6), num(label_y), colors::fault, colors::fault,
                       flip ? "end" : "start", esc(label));
  }
  y += 14 * static_cast<double>(row_ends.size()) + 2;
  faults_top_ = top + 2;
  return out + "\n";
}

std::string Timeline::fault_label(const TraceFault& f) {
  std::string target = f.target;
  if (target.size() > 48) target = target.substr(0, 47) + "…";
  return fmt::format("{} {}: {}", f.kind, f.action, target);
}

std::string Timeline::draw_faults() const {
  std::string out;
  for (const auto& f : t_.faults) {
    const double fx = x(f.time);
    out += fmt::format(
        R"~(<line class="fault" x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="{3}" stroke-width="1.5" stroke-dasharray="5 3" data-kind="{4}"><title>{5}</title></line>)~",
        num(fx), num(faults_top_), num(lanes_bottom_), colors::fault, esc(f.kind),
        esc(fmt::format("{} at {}", fault_label(f), short_time(f.time))));
    out += fmt::format(R"~(<path d="M{},{} l-5,-8 h10 z" fill="{}"/>)~", num(fx), num(rounds_top_ + 2), colors::fault);
    for (int rank : f.ranks) {
      if (rank >= t_.workers || mode_ == Mode::per_step) continue;
      out += fmt::format(R"~(<circle cx="{}" cy="{}" r="4.5" fill="{}" stroke="#ffffff" stroke-width="1.2"/>)~", num(fx),
                         num(lane_top(lane_of_rank(rank)) + lane_height_ / 2), colors::fault);
    }
  }
  return out + "\n";
}

}  // namespace collsim::viz::timeline
