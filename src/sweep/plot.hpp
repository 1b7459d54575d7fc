#pragma once
// Line plots of sweep results as SVG: one line per series, model and lower-bound curves
// dashed, log axes where the values span decades, labelled axes with units, a legend.
#include <string>
#include <vector>

#include "sweep/results.hpp"

namespace collsim {

struct PlotSpec {
  std::string x;                     // an axis column; empty: the first numeric axis
  std::string y = "simulated_time";  // a metric column
  std::string series;                // an axis column; empty: every other axis together
  std::string title;
};

std::string plot_svg(const std::vector<ResultRow>& rows, const PlotSpec& spec);

}  // namespace collsim
