#pragma once
// The scenario's faults, their targets found on the platform: each host and link named,
// the ranks each strikes, and where the fault injectors and the coordinator run (a host
// that no fault preempts).
#include <vector>

#include "plan/run_plan.hpp"

namespace simgrid::s4u {
class Engine;
class Host;
}  // namespace simgrid::s4u

namespace collsim {

class Network;

// Checks every target (InputError naming faults.N.field) and that at least one worker
// survives every preemption. A fault on a named link strikes the ranks it cuts off from
// the others (model/link_sides.hpp: a node's NIC, the node's ranks), read from `routes`.
std::vector<PlannedFault> resolve_faults(const Scenario& scenario, const simgrid::s4u::Engine& engine,
                                         const std::vector<simgrid::s4u::Host*>& all_hosts,
                                         const std::vector<simgrid::s4u::Host*>& rank_hosts, const Network& routes);

// A host no fault preempts, preferably one without a worker: injectors and the
// coordinator run there.
simgrid::s4u::Host* choose_control_host(const std::vector<PlannedFault>& faults,
                                        const std::vector<simgrid::s4u::Host*>& all_hosts,
                                        const std::vector<simgrid::s4u::Host*>& rank_hosts);

}  // namespace collsim
