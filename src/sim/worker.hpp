#pragma once
// The worker actor of one rank: rounds of compute, collective and update, and, under
// recovery.policy "rebuild", the restart of an abandoned collective in a rebuilt group.
#include "sim/run_state.hpp"

namespace collsim {

void run_worker(RunState& state, int world);

// A worker whose host came back after a preemption: asks the coordinator to rejoin,
// receives the current model by broadcast at the round it joins, and trains on.
void run_returning_worker(RunState& state, int world);

// Under rebuild, members done with the last round wait for the others: once every live
// member of the group is done (and no verdict is on its way), they all go. Called when a
// member gets there, and when one leaves the group (preempted, dropped).
void let_the_group_go_if_done(RunState& state);

}  // namespace collsim
