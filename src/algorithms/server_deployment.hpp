#pragma once
// How the servers of allreduce `parameter-server` are deployed and what their CPU costs
// (collective.parameter_server, docs/scenario-format.md#parameter_server): what the
// algorithm (CollectiveArgs) and its schedule (ModelInput) both read.

namespace collsim {

struct ServerDeployment {
  // The servers are processes of their own, peers comm.size() + s of the ranks (on hosts of
  // their own or beside the workers); false: ranks 0 .. S-1 serve (and compute).
  bool processes = false;
  // Each node's ranks first reduce into the node's first rank, which alone pushes and pulls.
  bool local_aggregation = false;
  double cpu_per_byte = 0;     // seconds a server spends per byte it receives in the push
  double cpu_per_message = 0;  // seconds a server spends per message it receives or sends
  // Training with asynchronous or bounded-staleness servers (sim/async_servers.hpp): each
  // push is applied as it arrives, and a pull is answered once every worker is at most
  // `staleness` iterations behind (-1: at once, asynchronous). False: one allreduce per iteration.
  bool asynchronous = false;
  int staleness = -1;
};

}  // namespace collsim
