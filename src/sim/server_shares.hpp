#pragma once
// Which parameter servers serve a group, and what each holds, once some were lost under
// recovery.policy "rebuild" (recovery/coordinator_servers.cpp): the group's server peers
// are the servers left, and the vector is shared over them as if the run had started with
// them alone.
#include "algorithms/collective.hpp"
#include "comm/comm_group.hpp"
#include "sim/run_setup.hpp"

namespace collsim {

// The servers of `group`'s collective: its server processes' peers (those left), or the
// scenario's count of serving ranks capped by the group's size.
int servers_serving(const CollectiveArgs& args, const CommGroup& group);

// The index (0 ..) among `group`'s server peers of the server process at `endpoint` (the
// workers' count + its index as planned); -1: the group has it no longer.
int server_peer(const CommGroup& group, int endpoint);

// Bucket b's deployment over `args.servers` servers: the plan's own (the variables placed
// over every server), or, with fewer servers left, the variables placed again over them
// (collective.parameter_server.variables; even shards need nothing placed).
ServerDeployment bucket_deployment(const RunSetup& setup, const CollectiveArgs& args, size_t b);

}  // namespace collsim
