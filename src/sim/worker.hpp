#pragma once
// The worker actor of one rank: rounds of compute, collective and update, and, under
// recovery.policy "rebuild", the restart of an abandoned collective in a rebuilt group.
#include "sim/run_state.hpp"

namespace collsim {

void run_worker(RunState& state, int world);

// A worker whose host came back after a preemption: asks the coordinator to rejoin,
// receives the current model by broadcast at the round it joins, and trains on.
void run_returning_worker(RunState& state, int world);

}  // namespace collsim
