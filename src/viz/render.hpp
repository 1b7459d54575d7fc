#pragma once
// The pictures of a run, written from its trace: `collsim render TRACE.json` and
// `collsim run ... --svg/--html/--perfetto` both come here.
#include <nlohmann/json.hpp>
#include <string>

#include "viz/trace_view.hpp"

namespace collsim::viz {

struct PictureOutputs {
  std::string svg;       // timeline (SVG)
  std::string html;      // self-contained report (HTML)
  std::string perfetto;  // Chrome trace event format (JSON), for ui.perfetto.dev and chrome://tracing

  bool any() const { return !svg.empty() || !html.empty() || !perfetto.empty(); }
};

// Writes each picture asked for, whole or not at all; errors name the option (--svg, ...).
void write_pictures(const TraceView& trace, const PictureOutputs& outputs);

}  // namespace collsim::viz
