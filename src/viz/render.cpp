#include "viz/render.hpp"

#include "util/atomic_file.hpp"
#include "viz/html_report.hpp"
#include "viz/perfetto.hpp"
#include "viz/timeline_svg.hpp"

namespace collsim::viz {

void write_pictures(const TraceView& trace, const PictureOutputs& outputs) {
  if (!outputs.svg.empty()) write_file_atomically(outputs.svg, timeline_svg(trace), "--svg");
  if (!outputs.html.empty()) write_file_atomically(outputs.html, html_report(trace), "--html");
  if (!outputs.perfetto.empty())
    write_file_atomically(outputs.perfetto, perfetto_trace(trace).dump() + "\n", "--perfetto");
}

}  // namespace collsim::viz
