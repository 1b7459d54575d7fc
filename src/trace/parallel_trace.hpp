#pragma once
// The JSON trace of a parallel run (docs/trace-format.md#parallel-runs): the scenario and
// platform as in every trace, then `parallel`: the layout, each communicator's groups and
// times (for plain collectives each group's start, end and check), and for a training step
// its figures and every traced rank's lanes. `compare` and `render` read it back.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "parallel/executor.hpp"

namespace collsim {

nlohmann::json build_parallel_trace(const ParallelOutcome& outcome);

// Every traced rank's lanes (ranks below plan/run_plan.hpp's max_activity_ranks): a step's
// intervals, or for plain collectives one interval per rank of each group, on its
// communicator's lane.
std::vector<StepInterval> parallel_intervals(const ParallelOutcome& outcome);

// The lanes read back from a trace's `parallel.intervals`; InputError naming `source` and the
// entry when one is malformed.
std::vector<StepInterval> intervals_from_trace(const nlohmann::json& parallel, const std::string& source);

// A communicator's name in the trace and in `compare`: its dimension ("tensor"), "ranks"
// for explicit groups, with "#N" (its place in parallelism.collectives, from 1) when an
// earlier collective has the same name.
std::string communicator_trace_name(const std::vector<CommunicatorPlan>& communicators, size_t index);

}  // namespace collsim
