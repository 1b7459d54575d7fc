#pragma once
// `collsim sweep show RESULTS`: a results table as people read it, one line per point, in
// human units ("13.4258 ms", "9.953 GB/s", "64 MiB"), the columns that say something.
#include <string>
#include <vector>

#include "sweep/results.hpp"

namespace collsim {

struct ShowSpec {
  std::vector<std::string> metrics;  // the metric columns to show; empty: the usual ones that have values
  std::string sort;                  // a column to sort by (an axis or a metric); empty: point order
};

std::string show_results(const std::vector<ResultRow>& rows, const ShowSpec& spec);

}  // namespace collsim
