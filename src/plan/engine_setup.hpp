#pragma once
// The process's one SimGrid engine, with the run's options set before it exists (SimGrid
// ignores some set afterwards). Planning makes it: SimGrid builds a platform only inside
// an engine.
#include <string>
#include <utility>
#include <vector>

#include "plan/simgrid_guard.hpp"
#include "scenario/scenario.hpp"

namespace simgrid::s4u {
class Engine;
}

namespace collsim {

// Whether no transfer of the run can have a latency phase in SimGrid (every link's latency is
// carried by collsim's transport and no fault sets one): SimGrid's Lazy update is exact then.
bool transfers_without_latency(const Scenario& scenario);

// The SimGrid options collsim sets, each with where it came from: the network model's,
// collsim's speed settings, the scenario's "cfg", then the user's --cfg (later ones win).
using SimGridOptions = std::vector<std::pair<std::string, std::string>>;
SimGridOptions simgrid_options(const Scenario& scenario, const std::vector<std::string>& user_cfg);

// Each option is one SimGrid knows, with a value it takes (InputError naming its field).
void check_simgrid_options(const SimGridOptions& options);

// The engine, made once per process (a second call is a logic error: every simulation
// runs in a process of its own), with `options` set; from now on `guard` catches SimGrid's
// aborts and crashes.
simgrid::s4u::Engine& create_engine(const SimGridOptions& options, SimGridGuard& guard);

}  // namespace collsim
