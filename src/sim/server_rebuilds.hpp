#pragma once
// A parameter server's process (collective.parameter_server placement "shared" or
// "dedicated") under recovery.policy "rebuild": it serves each round's collective in the
// group of the moment, and when the coordinator rebuilds the group (a worker lost), it leaves
// what it was serving and serves the round the group resumes from in the new group, whose
// pushers are the survivors: its sums are theirs only (docs/recovery.md, parameter servers).
#include "sim/run_state.hpp"

namespace collsim {

// Server `server` (endpoint workers + server), until the engine ends (a daemon: it waits
// for news of a rebuild after the last round, since the group may go back to redo it).
void serve_through_rebuilds(RunState& state, int server);

}  // namespace collsim
