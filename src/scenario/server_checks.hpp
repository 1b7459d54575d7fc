#pragma once
// What recovery.policy "rebuild" allows with parameter servers' processes
// (collective.parameter_server placement "shared" or "dedicated"): scenario/parameter_server_spec.cpp.
#include "scenario/scenario.hpp"

namespace collsim {

// Throws InputError naming the field when a rebuild could not go on with the servers: a
// fault other than a worker's preemption for good, several streams, asynchronous servers.
void check_rebuilt_servers(const Scenario& scenario);

}  // namespace collsim
