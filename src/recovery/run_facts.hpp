#pragma once
// What recovery knows of the run, all of it fixed before the engine runs: the scenario
// (its recovery settings, training and faults), the algorithm and the model's input, where
// the ranks are, and how the engine's network model shares links (the detector's expected
// times are the ones SimGrid gives). sim/ fills it from the run's setup.
#include <string>
#include <vector>

#include "algorithms/model_input.hpp"
#include "algorithms/registry.hpp"
#include "scenario/scenario.hpp"

namespace collsim {

class Network;

// SimGrid's network model settings that change a transfer's time (its --cfg values).
struct NetworkSolver {
  double latency_factor = 1;    // network/latency-factor
  double bandwidth_factor = 1;  // network/bandwidth-factor
  double tcp_gamma = 0;         // network/TCP-gamma: a flow's window (0: none)
  double weight_s = 0;          // network/weight-S: part of a route's sharing penalty
  bool cross_traffic = false;   // network/crosstraffic: each flow loads its route back too
  double precision = 1e-12;     // surf/precision: transfers due within it of a step end together
};

struct RunFacts {
  const Scenario* scenario = nullptr;
  const AlgorithmInfo* algorithm = nullptr;
  ModelInput model;                    // the whole group's; model_for(members) a smaller group's
  std::vector<int> rank_localities;    // by world rank: the hierarchical allreduce's groups
  std::vector<std::string> rank_hosts;  // by world rank: the host's name
  std::string control_host;            // where the coordinator runs (no fault preempts it)
  int control_rank = -1;               // a worker on the control host (-1: none)
  double host_speed = 0;               // flops/s of rank 0's host (training.compute in flops)
  bool zero3 = false;                  // training.sharding "zero3": the collectives are a stream's halves
  NetworkSolver solver;

  // Parameter servers' processes (collective.parameter_server placement "shared" or
  // "dedicated"): peers of the workers, endpoints world_size() .. endpoints() - 1. No
  // member: the detector counts their transfers, the coordinator tells them of new groups.
  int servers = 0;
  std::vector<std::string> server_hosts;  // by server: its host's name

  int world_size() const { return static_cast<int>(rank_hosts.size()); }
  int endpoints() const { return world_size() + servers; }
  const Network& network() const { return *model.network; }
  ModelInput model_for(const std::vector<int>& members) const {
    return model_for_members(model, rank_localities, members);
  }
  bool on_control_host(int world) const { return rank_hosts[static_cast<size_t>(world)] == control_host; }
};

}  // namespace collsim
