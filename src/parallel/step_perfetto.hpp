#pragma once
// A parallel run's lanes as Chrome trace events (ui.perfetto.dev, chrome://tracing): one
// process per rank, one thread per lane of the rank: compute, and each communicator it waits
// on or runs (tensor, pipeline, expert, data, then any other communicator in order of first
// appearance); each interval a complete event with its micro-batch. `collsim run --perfetto`
// draws a step's from the run, `collsim render --perfetto` a parallel trace's from its
// `parallel.intervals`.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "parallel/step_executor.hpp"

namespace collsim {

// A lane's place among a rank's lanes, from 1: the step's lanes first, in a fixed order, then
// the others as they come. Perfetto's thread ids and the HTML report's rows.
class LaneOrder {
 public:
  int operator()(const std::string& lane);

 private:
  std::map<std::string, int> ids_{{"compute", 1}, {"tensor", 2}, {"pipeline", 3}, {"expert", 4}, {"data", 5}};
};

nlohmann::json step_perfetto(const std::vector<StepInterval>& intervals, const std::string& name, double step_time);

}  // namespace collsim
