#pragma once
// Training with asynchronous and bounded-staleness parameter servers
// (collective.parameter_server.mode "asynchronous" or "bounded"; Li et al. OSDI 2014, Ho et
// al. NIPS 2013): no allreduce per iteration. Each worker computes its gradient on the model
// it last pulled, pushes shard s to server s and pulls the shards back; each server applies
// the pushes as they arrive (whoever pushes first: several transfers in flight, one receive
// posted per worker) and answers a pull once every worker has pushed at least
// round + 1 - staleness iterations (at once when asynchronous; staleness 0 is synchronous).
// Every applied push is recorded (RunRecord::updates), which the verification replays.
#include "sim/run_state.hpp"

namespace collsim {

void run_async_worker(RunState& state, int world);
void run_async_server(RunState& state, int server);

}  // namespace collsim
