#pragma once
// A parallel step as Chrome trace events (ui.perfetto.dev, chrome://tracing): one process per
// rank, one thread per lane of the rank: compute, and each communicator it waits on or runs
// (tensor, pipeline, expert, data); each interval a complete event with its micro-batch.
#include <nlohmann/json.hpp>

#include "parallel/step_executor.hpp"

namespace collsim {

nlohmann::json step_perfetto(const StepResult& result, const std::string& name);

}  // namespace collsim
