#pragma once
// Layered training under the timeline: for each rank a compute lane (each layer's forward,
// then each layer's backward) and a communication lane (each bucket's collective), on the
// timeline's time axis, so that a reader sees which collectives hide behind backward and
// which stay exposed. Drawn from the trace's `activities` (docs/trace-format.md#activities).
#include <string>

#include "viz/trace_view.hpp"

namespace collsim::viz {

struct IterationLanesPlace {
  double left = 0, plot_width = 0;  // the timeline's plot area, in pixels
  double end = 1;                   // seconds at its right edge
  double top = 0;                   // where the lanes start
  int max_ranks = 16;               // ranks drawn (the first ones); the rest are named in a note
  size_t max_tooltips = 4000;       // each bar has a tooltip up to this many bars
};

struct IterationLanes {
  std::string svg;
  double bottom = 0;  // below the last lane
};

// Nothing (svg empty, bottom = top) when the trace has no activities.
IterationLanes iteration_lanes_svg(const TraceView& trace, const IterationLanesPlace& place);

}  // namespace collsim::viz
