#include "platform/platform.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <sstream>

#include "util/errors.hpp"
#include "util/units.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

std::optional<StarGenerator> parse_generator(const std::string& topology, const std::string& field) {
  if (topology.rfind("star:", 0) != 0) {
    if (topology == "star")
      throw InputError(fmt::format("{}: 'star' needs a host count, as in star:16 or star:16:10GBps:1us", field));
    return std::nullopt;
  }
  std::vector<std::string> parts;
  std::stringstream stream(topology);
  for (std::string part; std::getline(stream, part, ':');) parts.push_back(part);
  if (parts.size() < 2 || parts.size() > 4)
    throw InputError(fmt::format("{}: '{}' is not star:P[:BW[:LAT]] (example: star:16:10GBps:1us)", field, topology));
  StarGenerator star;
  try {
    size_t used = 0;
    const long hosts = std::stol(parts[1], &used);
    if (used != parts[1].size() || hosts < 1 || hosts > 1'000'000) throw std::invalid_argument("range");
    star.hosts = static_cast<int>(hosts);
  } catch (const std::exception&) {
    throw InputError(fmt::format("{}: host count '{}' in '{}' must be an integer >= 1", field, parts[1], topology));
  }
  if (parts.size() > 2) {
    star.bandwidth = parse_bandwidth(parts[2], field);
    star.bandwidth_text = parts[2];
  }
  if (parts.size() > 3) {
    star.latency = parse_time(parts[3], field);
    star.latency_text = parts[3];
  }
  return star;
}

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
                               "topologies/star-8.xml, or a generator such as star:8; `collsim list topologies`)",
                               field, topology));
}

namespace {

std::vector<sg4::Host*> generate_star(const StarGenerator& star) {
  std::vector<sg4::Host*> hosts;
  // Each host gets a split-duplex private link: sending uses its UP half, receiving its
  // DOWN half, so a host can send and receive at full speed at the same time.
  auto* zone = sg4::create_star_zone("star");
  for (int i = 0; i < star.hosts; ++i) {
    const std::string name = fmt::format("host-{}", i);
    sg4::Host* host = zone->create_host(name, 1e9);
    hosts.push_back(host);
    sg4::Link* link = zone->create_split_duplex_link(name + "_link", star.bandwidth)->set_latency(star.latency);
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}}, true);
  }
  zone->seal();
  return hosts;
}

}  // namespace

PlatformInfo build_platform(sg4::Engine& engine, const std::string& topology, const std::string& scenario_dir) {
  PlatformInfo info;
  info.source = topology;
  // Ranks follow the order in which hosts are created (the platform file's order), across
  // all zones; SimGrid's own host list is sorted by name ("host-10" before "host-2").
  // (static: the callback stays connected for the life of the engine, i.e. the process)
  static std::vector<sg4::Host*> created;
  sg4::Host::on_creation_cb([](sg4::Host& host) { created.push_back(&host); });
  std::vector<sg4::Host*> generated;
  if (auto star = parse_generator(topology, "topology")) {
    info.kind = "generator";
    generated = generate_star(*star);  // in host-0, host-1, ... order (signals come sorted by name)
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
  // SimGrid 3.32 signals the creation of a host from a platform file twice: keep the first.
  for (sg4::Host* host : generated.empty() ? created : generated)
    if (std::find(info.hosts.begin(), info.hosts.end(), host) == info.hosts.end()) info.hosts.push_back(host);
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
