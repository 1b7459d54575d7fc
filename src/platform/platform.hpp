#pragma once
// Where the simulated hosts and links come from: a SimGrid platform file from
// topologies/, or a generator string such as "star:16:10GBps:1us" or "nodes:4:8"
// (generator_spec.hpp lists the families, docs/topologies.md describes them).
#include <string>
#include <vector>

#include "platform/generator_spec.hpp"

namespace simgrid::s4u {
class Engine;
class Host;
}  // namespace simgrid::s4u

namespace collsim {

// Finds a platform file: as given, then beside the scenario, then in the collsim data
// folder. Throws InputError naming `field` when none exists.
std::string resolve_platform_file(const std::string& topology, const std::string& scenario_dir,
                                  const std::string& field);

struct PlatformInfo {
  std::string source;          // the file path or the generator string
  std::string kind;            // "file" or "generator"
  std::vector<simgrid::s4u::Host*> hosts;  // in platform order (order of creation)
  // Hosts that are no place for a rank: switches that reduce in the network (their host
  // property `role`: nvswitch, sharp-switch), in platform order.
  std::vector<simgrid::s4u::Host*> switches;
  size_t link_count = 0;
  // Every host is a GPU (its property `gpu`: the rail generators and the GPU presets set it, a
  // platform file may): collsim's own algorithms then pay a GPU's transport (plan/nccl_run.hpp).
  bool gpus = false;
};

// How a run wants its platform built.
struct PlatformOptions {
  bool pxn = false;  // rail zones route other-rail sends through NCCL's PXN (generator_spec.hpp)
  // The run's transport charges every hop's latency (NCCL's hwLat, measured on the hardware,
  // wire included): the links' own latencies are 0, so that SimGrid shares a link's
  // bandwidth equally among the messages crossing it (it weighs each by 1 / its route's
  // latency otherwise).
  bool latency_in_transport = false;
  // The same when every host is a GPU (PlatformInfo::gpus): collsim's own algorithms there
  // run on NCCL's send/recv, whose transport charges the hops.
  bool latency_in_transport_on_gpus = false;
};

// Loads or generates the platform into the engine.
PlatformInfo build_platform(simgrid::s4u::Engine& engine, const std::string& topology,
                            const std::string& scenario_dir, const PlatformOptions& options = {});

// Latency and bottleneck bandwidth of the route between two hosts.
struct RouteCost {
  double latency = 0;
  double bandwidth = 0;
};
RouteCost route_cost(const simgrid::s4u::Host* from, const simgrid::s4u::Host* to);

}  // namespace collsim
