#include "scenario/step_faults.hpp"

#include <fmt/format.h>

#include "util/errors.hpp"

namespace collsim {

// A fault in a training step: a slow GPU or NIC, or a lost worker (preempt, link-down) whose
// replica leaves under recovery.policy "rebuild" (docs/parallelism.md#a-lost-worker-recovery-on-the-data-parallel-dimension).
void check_step_fault(const Scenario& scenario, size_t i) {
  const FaultSpec& fault = scenario.faults[i];
  const ParallelismSpec& p = scenario.parallelism;
  if (fault.at_round)
    throw InputError(fmt::format("faults.{}.at_round: a step has no rounds; give at (\"0s\": from the start)", i));
  if (fault.kind != FaultKind::preempt && fault.kind != FaultKind::link_down) return;
  if (fault.return_after)
    throw InputError(fmt::format("faults.{}.return_after: a returning worker rejoins at a round, and a step has none; "
                                 "leave it out (its replica stays out of the step)", i));
  if (p.expert > 1)
    throw InputError(fmt::format("faults.{}.kind: a lost worker with parallelism.expert {}: expert groups span the "
                                 "data-parallel replicas, whose alltoalls a lost replica would break; use expert 1", i, p.expert));
  if (p.step.zero > 0 && scenario.recovery.policy == RecoveryPolicy::rebuild)
    throw InputError(fmt::format("faults.{}.kind: with parallelism.step.zero {} the optimizer states are sharded over "
                                 "the data-parallel group: a lost replica's shards would have to come from a checkpoint, "
                                 "which collsim does not model; use zero 0 with recovery.policy \"rebuild\"", i, p.step.zero));
}

}  // namespace collsim
