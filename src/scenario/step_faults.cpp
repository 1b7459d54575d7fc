#include "scenario/step_faults.hpp"

#include <fmt/format.h>

#include "util/errors.hpp"

namespace collsim {

// A fault in a training step: a slow GPU or NIC, or a lost worker (preempt, link-down) whose
// replica (with expert parallelism, its expert group) leaves under recovery.policy "rebuild"
// (docs/parallelism.md#a-lost-worker-recovery-on-the-data-parallel-dimension).
void check_step_fault(const Scenario& scenario, size_t i) {
  const FaultSpec& fault = scenario.faults[i];
  if (fault.at_round)
    throw InputError(fmt::format("faults.{}.at_round: a step has no rounds; give at (\"0s\": from the start)", i));
  if (fault.kind != FaultKind::preempt && fault.kind != FaultKind::link_down) return;
  if (fault.return_after)
    throw InputError(fmt::format("faults.{}.return_after: a returning worker rejoins at a round, and a step has none; "
                                 "leave it out (its replica stays out of the step)", i));
}

}  // namespace collsim
