#pragma once
// Line plots of sweep results as SVG: one line per series, the model dashed with a hollow
// marker at each point (visible where it hides under the simulated line), bounds dotted and
// labelled, reference lines, an ideal-scaling line, axes in human units with ticks at the
// data's own values, a legend that always fits. docs/sweeps.md, "Plots".
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sweep/results.hpp"

namespace collsim {

// A horizontal line across the plot: its label and its value in the y metric's unit.
struct PlotReference {
  std::string label;
  double value = 0;
};

struct PlotSpec {
  std::string x;                     // an axis column; empty: the first numeric axis
  std::string y = "simulated_time";  // a metric column
  std::string series;                // an axis column; empty: every other axis together
  std::string title;
  std::string x_scale = "auto", y_scale = "auto";  // auto (log when the values span decades), linear, log
  std::string bound = "lower_bound";               // the bound drawn dotted: lower_bound, topology_bound, none
  std::vector<PlotReference> references;
  bool ideal = false;  // a line y = y0 x / x0 through each series' first point (ideal scaling)
};

std::string plot_svg(const std::vector<ResultRow>& rows, const PlotSpec& spec);

// "LABEL=VALUE": VALUE in the y metric's unit ("10GBps", "144.8ms", "3"), or a trace
// ("out/run.json": its summary's value of the y metric; "out/run.json:baseline_time": another
// summary figure). Errors name `field`.
PlotReference parse_plot_reference(const std::string& text, const std::string& y, const std::string& field);

// The "plot" object of a sweep file (title, x, y, series, x_scale, y_scale, bound,
// references, ideal) over the defaults; unknown keys are errors.
PlotSpec plot_spec_from_json(const nlohmann::json& plot, PlotSpec spec = {});

// Checks the scales and the bound of a spec given on the command line.
void check_plot_spec(const PlotSpec& spec);

}  // namespace collsim
