#pragma once
// Fault injection: each fault of the plan (its targets found in planning, plan/fault_plan.hpp)
// is applied (and undone after its duration) by an injector actor at its time or at the
// start of its round. SimGrid cannot attach profiles to <cluster> links, so links are
// changed from the injector, as they would be by an operator.
#include <string>
#include <vector>

#include "plan/run_plan.hpp"
#include "sim/run_state.hpp"

namespace simgrid::s4u {
class Engine;
class Host;
class Link;
}  // namespace simgrid::s4u

namespace collsim {

struct ResolvedFault {
  FaultSpec spec;
  int index = 0;
  std::string target;                       // for people: "link host-3_link", "host host-5 (rank 5)"
  std::vector<simgrid::s4u::Link*> links;   // slow-link, link-down
  simgrid::s4u::Host* host = nullptr;       // slow-host, preempt
  std::vector<int> ranks;                   // the workers on `host`; for a link, those behind it
};

// The planned faults' hosts and links, found by name in the engine's platform.
std::vector<ResolvedFault> arm_faults(const std::vector<PlannedFault>& planned);

// Starts an injector actor on the control host for each fault at a time; faults at a
// round wait for announce_round.
void start_fault_injectors(RunState& state, const std::vector<ResolvedFault>& faults);

// Workers call this when they start a round, so that at_round faults fire; true when
// `round` was not announced before.
bool announce_round(RunState& state, int round);

}  // namespace collsim
