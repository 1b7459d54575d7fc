#pragma once
// Where the servers of allreduce `parameter-server` run (collective.parameter_server): their
// count (collective.servers, a ratio of the workers, so many per node, or a list of hosts),
// and, for server processes of their own, their hosts as peers after the ranks (the plan's
// switches, the model's endpoints and routes).
#include <nlohmann/json.hpp>
#include <vector>

#include "algorithms/partners.hpp"
#include "plan/run_plan.hpp"

namespace simgrid::s4u {
class Host;
}

namespace collsim {

// Sets plan.model's servers and deployment; for server processes, adds their hosts to
// plan.switches and the model's routes. Throws InputError naming the field.
void plan_servers(const std::vector<simgrid::s4u::Host*>& hosts, const RankLocality& locality, RunPlan& plan);

// Every server process with every rank (their routes give alpha and B as people read them).
RankPairs server_process_partners(const ModelInput& model);

// The deployment as run, for the plan's algorithm parameters.
nlohmann::json server_parameters(const RunPlan& plan);

}  // namespace collsim
