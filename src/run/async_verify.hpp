#pragma once
// Asynchronous and bounded-staleness parameter servers (sim/async_servers.hpp) apply pushes
// in an order the run decides: each rank's last pull is checked against the same sequence of
// pushes the servers applied (SimResult::updates), replayed independently of the simulation:
// the inputs regenerated, or, training a model, every gradient recomputed from the model its
// worker had pulled, in a wider type.
#include "sim/simulation.hpp"
#include "sim/verify.hpp"

namespace collsim {

Verification verify_async(const SimResult& result);

}  // namespace collsim
