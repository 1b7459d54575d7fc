#pragma once
// The timeline picture's insides (viz/timeline_svg.hpp draws it), shared by the files that
// define it: timeline_svg.cpp (the layout, the lanes, messages, waits, steps, the axis and
// the legend) and timeline_faults.cpp (faults, recovery, ranks out of the group).
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "viz/palette.hpp"
#include "viz/timeline_svg.hpp"
#include "viz/trace_view.hpp"

namespace collsim::viz::timeline {

// A bar on a lane: one message (or step), or several merged ones of the same phase.
struct Span {
  double start = 0, end = 0;
  int phase = 0;
  uint64_t messages = 1;
  const TraceMessage* message = nullptr;  // set while the span is one message
  uint64_t steps = 1;                     // per-step traces: steps merged into this span
};

struct LegendItem {
  std::string swatch;  // SVG drawn in a 14x10 box at (0, 0)
  std::string label;
};

class Timeline {
public:
  Timeline(const TraceView& trace, const TimelineOptions& options);

  std::string render();

private:
  enum class Mode { per_rank, grouped, per_step };

  const char* mode_name() const;

  double x(double time) const { return left_ + std::clamp(time / end_, 0.0, 1.0) * plot_width_; }
  double seconds_per_pixel() const { return end_ / plot_width_; }
  int lane_of_rank(int rank) const { return mode_ == Mode::grouped ? rank / ranks_per_lane_ : rank; }
  double lane_top(int lane) const { return lanes_top_ + lane * lane_height_; }
  double row_height() const { return (lane_height_ - 4) / 2; }
  double send_row(int lane) const { return lane_top(lane) + 1.5; }
  double recv_row(int lane) const { return lane_top(lane) + 2.5 + row_height(); }

  std::string prefixed(const char* id) const { return o_.id_prefix + "-" + id; }

  void explain_mode();

  std::string definitions() const;

  // Alternate rounds get a faint band behind the lanes, so that rounds read apart.
  std::string draw_round_backgrounds() const;

  std::string draw_grid();

  std::string draw_rounds_strip() const;

  std::string lane_label(int lane) const;

  std::string draw_lane_labels() const;

  std::string draw_compute();

  // Sorts spans by start and, when asked, merges touching spans of one phase.
  std::vector<Span> arrange(std::vector<Span> spans, bool merge) const;

  std::string span_rect(const Span& span, double y, double height, const std::string& fill, const char* kind,
                        bool tooltips) const;

  std::string draw_messages();

  // Messages of one rank that overlap in time are drawn over each other: say how many
  // share the bar ("×7" for the root of a flat reduce).
  std::string overlap_counts(const std::vector<Span>& spans, double y, const char* color) const;

  // Between entering the collective and its last transfer of a round, a rank that neither
  // sends nor receives waits for a peer.
  std::string draw_waits(const std::vector<std::vector<Span>>& sends, const std::vector<std::vector<Span>>& receives);

  // LogP's overhead: a sender spends o before each message leaves, so that the messages it
  // posts leave o apart. A dark strip along the top of the send row, [start - o, start].
  std::string draw_overheads();

  std::string wait_rect(int lane, double from, double to);

  std::string draw_steps();

  std::string draw_recovery();

  std::string draw_absences();

  // Fault labels sit above the rounds strip, staggered on up to three rows; the lines are
  // drawn over the lanes later.
  std::string draw_fault_labels(double& y);

  static std::string fault_label(const TraceFault& f);

  std::string draw_faults() const;

  double draw_axis(std::string& out, double y) const;

  double draw_legend(std::string& out, double top) const;

  const TraceView& t_;
  TimelineOptions o_;
  Palette palette_;
  double end_;
  Mode mode_ = Mode::per_rank;
  int lanes_ = 1, ranks_per_lane_ = 1;
  double left_ = 150, right_ = 24, plot_width_ = 0, lane_height_ = 20, strip_height_ = 18;
  double rounds_top_ = 0, recovery_top_ = 0, faults_top_ = 0, lanes_top_ = 0, lanes_bottom_ = 0;
  std::vector<double> ticks_;
  std::vector<std::string> notes_;
  std::set<int> used_phases_;
  bool computes_ = false, waits_ = false, reductions_ = false, arrows_ = false, overheads_ = false;
  bool detection_ = false, undetected_ = false, rebuild_ = false, resume_ = false, dropped_ = false;
};

}  // namespace collsim::viz::timeline
