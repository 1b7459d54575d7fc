#pragma once
// The faults a training step (parallelism.step) takes, checked when the scenario is read: a
// slow GPU or NIC any time; a lost worker (preempt, link-down) as
// docs/parallelism.md#a-lost-worker-recovery-on-the-data-parallel-dimension allows it.
#include <cstddef>

#include "scenario/scenario.hpp"

namespace collsim {

// Throws InputError naming faults.I when scenario.faults[i] cannot strike the step.
void check_step_fault(const Scenario& scenario, size_t i);

}  // namespace collsim
