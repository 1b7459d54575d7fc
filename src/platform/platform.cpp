#include "platform/platform.hpp"

#include <algorithm>
#include <memory>
#include <filesystem>
#include <iterator>
#include <fmt/format.h>
#include <limits>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <unordered_set>

#include "platform/generators.hpp"
#include "util/errors.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

std::string resolve_platform_file(const std::string& topology, const std::string& scenario_dir,
                                  const std::string& field) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates{fs::path(topology)};
  if (fs::path(topology).is_relative()) {
    if (!scenario_dir.empty()) candidates.push_back(fs::path(scenario_dir) / topology);
    candidates.push_back(fs::path(COLLSIM_SOURCE_DIR) / topology);
    candidates.push_back(fs::path(COLLSIM_SOURCE_DIR) / "topologies" / topology);
  }
  for (const auto& candidate : candidates)
    if (fs::is_regular_file(candidate)) return candidate.string();
  throw InputError(fmt::format("{}: platform file '{}' not found (give a SimGrid XML file, e.g. "
                               "topologies/star-8.xml, or a generator such as star:8 or torus:4x4; `collsim list "
                               "topologies`)",
                               field, topology));
}

PlatformInfo build_platform(sg4::Engine& engine, const std::string& topology, const std::string& scenario_dir,
                            const PlatformOptions& options) {
  PlatformInfo info;
  info.source = topology;
  // Ranks follow the order in which hosts are created (the platform file's order), across
  // all zones; SimGrid's own host list is sorted by name ("host-10" before "host-2").
  // (the callback stays connected for the life of the engine: it holds the list weakly)
  auto created_list = std::make_shared<std::vector<sg4::Host*>>();
  sg4::Host::on_creation_cb([weak = std::weak_ptr<std::vector<sg4::Host*>>(created_list)](sg4::Host& host) {
    if (const auto list = weak.lock()) list->push_back(&host);
  });
  const std::vector<sg4::Host*>& created = *created_list;
  std::vector<sg4::Host*> generated;
  if (auto generator = parse_generator(topology, "topology")) {
    info.kind = "generator";
    if (auto* rail = std::get_if<RailSpec>(&*generator)) rail->pxn = options.pxn;
    generated = generate_platform(*generator);  // in rank order (generators.hpp)
  } else {
    info.kind = "file";
    info.source = resolve_platform_file(topology, scenario_dir, "topology");
    try {
      engine.load_platform(info.source);
    } catch (const std::exception& error) {
      // SimGrid's messages may run over several lines (lists of names): keep one.
      std::string message = error.what();
      std::replace(message.begin(), message.end(), '\n', ' ');
      if (message.size() > 300) message = message.substr(0, 300) + "...";
      throw InputError(fmt::format("topology: cannot load '{}': {}", info.source, message));
    }
  }
  // Routing tables (Floyd, Dijkstra) are only complete once the platform is sealed.
  engine.seal_platform();
  info.hosts = generated;
  // SimGrid 3.32 signals the creation of a host from a platform file twice: keep the first.
  std::unordered_set<const sg4::Host*> seen;
  if (info.kind == "file")
    for (sg4::Host* host : created)
      if (seen.insert(host).second) info.hosts.push_back(host);
  // switches are hosts for their actors, never for ranks
  const auto is_switch = [](const sg4::Host* host) { return host->get_property("role") != nullptr; };
  std::copy_if(info.hosts.begin(), info.hosts.end(), std::back_inserter(info.switches), is_switch);
  std::erase_if(info.hosts, is_switch);
  info.gpus = std::all_of(info.hosts.begin(), info.hosts.end(),
                          [](const sg4::Host* host) { return host->get_property("gpu") != nullptr; });
  if (options.latency_in_transport || (options.latency_in_transport_on_gpus && info.gpus))
    for (sg4::Link* link : engine.get_all_links()) link->set_latency(0);
  info.link_count = engine.get_link_count();
  if (info.hosts.empty()) throw InputError(fmt::format("topology: '{}' has no hosts", info.source));
  return info;
}

RouteCost route_cost(const sg4::Host* from, const sg4::Host* to) {
  std::vector<sg4::Link*> links;
  RouteCost cost;
  from->route_to(to, links, &cost.latency);
  cost.bandwidth = std::numeric_limits<double>::infinity();
  for (const sg4::Link* link : links) cost.bandwidth = std::min(cost.bandwidth, link->get_bandwidth());
  return cost;
}

}  // namespace collsim
