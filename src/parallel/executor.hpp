#pragma once
// A parallel run (docs/parallelism.md): the plan (plan/planner.hpp: the engine, the
// platform, the ranks' hosts), the communicators' collectives (parallel/communicators.hpp),
// and one actor per world rank that starts every collective it takes part in at once, each
// in an actor of its own (sim/streams.hpp) on mailboxes of its own (Comm tags), so that they
// share the network as SimGrid shares it. Every group's result is verified on real data.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/message_log.hpp"
#include "parallel/communicators.hpp"
#include "parallel/step_summary.hpp"
#include "plan/planner.hpp"
#include "sim/verify.hpp"

namespace collsim {

// One collective in one group: when it ran (first rank in, last rank out) and its check.
struct GroupOutcome {
  int communicator = 0, group = 0;
  double start = 0, end = 0;
  Verification verification;
};

struct ParallelOutcome {
  std::shared_ptr<const RunPlan> plan;
  std::vector<CommunicatorPlan> communicators;
  std::vector<GroupOutcome> groups;  // by communicator, then group
  double step_time = 0;              // the last collective's end
  MessageLog messages;
  Verification verification;         // every group's, merged: the worst error, the first failure
  std::string stall;                 // why some collective never completed (empty if all did)
  // parallelism.step: the step simulated, and its figures
  std::optional<StepResult> step;
  StepFigures figures;

  // A communicator's time: from its first group's start to its last group's end.
  double communicator_time(int communicator) const;
};

// Plans and simulates a scenario with parallelism (one engine: once per process).
ParallelOutcome run_parallel(const Scenario& scenario, const PlanOptions& options);

// What people read after a run: the layout, the step time, one line per communicator.
std::string format_parallel_summary(const ParallelOutcome& outcome);

}  // namespace collsim
