#pragma once
// Fault injection: each fault of the scenario, its targets checked against the platform,
// is applied (and undone after its duration) by an injector actor at its time or at the
// start of its round. SimGrid cannot attach profiles to <cluster> links, so links are
// changed from the injector, as they would be by an operator.
#include <string>
#include <vector>

#include "sim/run_state.hpp"

namespace simgrid::s4u {
class Engine;
class Host;
class Link;
}  // namespace simgrid::s4u

namespace collsim {

class RouteCache;

struct ResolvedFault {
  FaultSpec spec;
  int index = 0;
  std::string target;                       // for people: "link host-3_link", "host host-5 (rank 5)"
  std::vector<simgrid::s4u::Link*> links;   // slow-link, link-down
  simgrid::s4u::Host* host = nullptr;       // slow-host, preempt
  std::vector<int> ranks;                   // the workers on `host`; for a link, those behind it
};

// Checks every target (InputError naming faults.N.field) and that at least one worker
// survives every preemption. A fault on a named link strikes the ranks it cuts off from
// the others (recovery/link_sides.hpp: a node's NIC, the node's ranks), read from `routes`.
std::vector<ResolvedFault> resolve_faults(const Scenario& scenario, const simgrid::s4u::Engine& engine,
                                          const std::vector<simgrid::s4u::Host*>& all_hosts,
                                          const std::vector<simgrid::s4u::Host*>& rank_hosts, const RouteCache& routes);

// A host no fault preempts, preferably one without a worker: injectors and the
// coordinator run there.
simgrid::s4u::Host* choose_control_host(const std::vector<ResolvedFault>& faults,
                                        const std::vector<simgrid::s4u::Host*>& all_hosts,
                                        const std::vector<simgrid::s4u::Host*>& rank_hosts);

// Starts an injector actor on the control host for each fault at a time; faults at a
// round wait for announce_round.
void start_fault_injectors(RunState& state, const std::vector<ResolvedFault>& faults);

// Workers call this when they start a round, so that at_round faults fire; true when
// `round` was not announced before.
bool announce_round(RunState& state, int round);

}  // namespace collsim
