#pragma once
// Where the simulated hosts and links come from: a SimGrid platform file from
// topologies/, or a generator string such as "star:16:10GBps:1us".
#include <optional>
#include <string>
#include <vector>

namespace simgrid::s4u {
class Engine;
class Host;
}  // namespace simgrid::s4u

namespace collsim {

// star:P[:BW[:LAT]]: P hosts, each with a private split-duplex link of bandwidth BW and
// latency LAT to a central switch (a route crosses two links: alpha = 2 LAT).
struct StarGenerator {
  int hosts = 0;
  double bandwidth = 10e9;  // bytes/s
  double latency = 1e-6;    // seconds, per link
  std::string bandwidth_text = "10GBps";
  std::string latency_text = "1us";
};

// Parses "star:..." (throws InputError naming `field`); nullopt if `topology` names no generator.
std::optional<StarGenerator> parse_generator(const std::string& topology, const std::string& field);

// Finds a platform file: as given, then beside the scenario, then in the collsim data
// folder. Throws InputError naming `field` when none exists.
std::string resolve_platform_file(const std::string& topology, const std::string& scenario_dir,
                                  const std::string& field);

struct PlatformInfo {
  std::string source;          // the file path or the generator string
  std::string kind;            // "file" or "generator"
  std::vector<simgrid::s4u::Host*> hosts;  // in platform order (order of creation)
  size_t link_count = 0;
};

// Loads or generates the platform into the engine.
PlatformInfo build_platform(simgrid::s4u::Engine& engine, const std::string& topology,
                            const std::string& scenario_dir);

// Latency and bottleneck bandwidth of the route between two hosts.
struct RouteCost {
  double latency = 0;
  double bandwidth = 0;
};
RouteCost route_cost(const simgrid::s4u::Host* from, const simgrid::s4u::Host* to);

}  // namespace collsim
