#pragma once
// The timeline of a run as an SVG picture: one lane per rank (sends in the upper half of
// the lane, receives in the lower half, coloured by phase), computation, waits, reductions,
// message arrows while they are few, faults and recovery, a time axis and a legend. At
// large p the ranks share lanes, and a per-step trace shows one lane per phase; the
// picture says so.
#include <cstddef>
#include <string>

#include "viz/trace_view.hpp"

namespace collsim::viz {

struct TimelineOptions {
  double width = 1200;        // pixels
  int max_lanes = 64;         // above this many ranks, ranks share lanes
  size_t max_arrows = 300;    // message arrows are drawn up to this many messages
  size_t max_tooltips = 500;  // each bar has a tooltip up to this many messages
  size_t merge_above = 4000;  // above this many messages, touching bars of a phase merge
  std::string id_prefix = "tl";  // ids of markers and patterns, unique within a page
  bool standalone = true;     // an SVG file (XML declaration) rather than inline in HTML
};

std::string timeline_svg(const TraceView& trace, const TimelineOptions& options = {});

}  // namespace collsim::viz
