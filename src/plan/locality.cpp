#include "plan/locality.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <unordered_map>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "algorithms/hierarchy.hpp"
#include "model/network.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

namespace {

// Names of the groups for people: all of them when few, else the first two and the last.
std::string list_groups(const std::vector<std::string>& names) {
  if (names.size() <= 4) return join(names);
  return fmt::format("{}, {}, ..., {}", names[0], names[1], names.back());
}

}  // namespace

RankLocality rank_locality(const Scenario& scenario, const RankPlaces& places) {
  RankLocality locality;
  const size_t p = places.ranks();
  if (const auto block = scenario.collective.group_size) {
    for (size_t r = 0; r < p; ++r) locality.ids.push_back(static_cast<int>(r) / *block);
    locality.source = fmt::format("collective.group_size {}", *block);
    return locality;
  }
  if (!places.node.empty()) {
    std::map<std::string, int> id_of;
    std::vector<std::string> nodes;
    for (const std::string& node : places.node) {
      const auto [it, fresh] = id_of.try_emplace(node, static_cast<int>(id_of.size()));
      if (fresh) nodes.push_back(it->first);
      locality.ids.push_back(it->second);
    }
    locality.source = fmt::format("host property node: {}", list_groups(nodes));
    return locality;
  }
  locality.ids = places.zone;
  const size_t zones = places.zone_names.size();
  locality.source = fmt::format("platform zone{} {}", zones == 1 ? "" : "s", list_groups(places.zone_names));
  return locality;
}

RankPlaces places_of(const std::vector<sg4::Host*>& hosts, const std::vector<sg4::Host*>& platform_hosts) {
  RankPlaces places;
  std::unordered_map<const sg4::Host*, size_t> place;
  for (size_t i = 0; i < platform_hosts.size(); ++i) place.emplace(platform_hosts[i], i);
  std::unordered_map<const sg4::NetZone*, int> zone_id;
  for (const sg4::Host* host : hosts) {
    places.position.push_back(place.at(host));
    const sg4::NetZone* zone = host->get_englobing_zone();
    const auto [it, fresh] = zone_id.try_emplace(zone, static_cast<int>(zone_id.size()));
    if (fresh) places.zone_names.emplace_back(zone->get_name());
    places.zone.push_back(it->second);
  }
  const bool by_property = !hosts.empty() && std::all_of(hosts.begin(), hosts.end(), [](const sg4::Host* host) {
    return host->get_property("node") != nullptr;
  });
  if (by_property)
    for (const sg4::Host* host : hosts) places.node.emplace_back(host->get_property("node"));
  return places;
}

void read_hierarchy(const std::vector<int>& locality, ModelInput& model) {
  const HierarchyPlan plan = plan_hierarchy(locality_groups(locality), model.elems);
  model.group_sizes.clear();
  // One step inside: every group's ring at once, each member sending to the next.
  std::vector<std::pair<int, int>> inside, across;
  for (const auto& group : plan.groups) {
    model.group_sizes.push_back(static_cast<int>(group.size()));
    if (group.size() > 1)
      for (size_t i = 0; i < group.size(); ++i) inside.emplace_back(group[i], group[(i + 1) % group.size()]);
  }
  // One step between: the ring of every piece at once, each owner sending to the next group's.
  if (plan.groups.size() > 1)
    for (const auto& piece : plan.pieces)
      for (size_t k = 0; k < piece.owners.size(); ++k)
        across.emplace_back(piece.owners[k], piece.owners[(k + 1) % piece.owners.size()]);
  model.intra = shared_routes(*model.network, inside);
  model.inter = shared_routes(*model.network, across);
}

namespace {

// On GPUs the transport prices each message's latency (ModelInput::message_cost: NCCL's hops,
// said in the note before this one) and the links carry none: "alpha 0 s" would mislead.
std::string describe_routes(const std::optional<SharedRoutes>& routes, bool latency_in_transport) {
  if (!routes) return "none";
  std::string text = latency_in_transport
                         ? fmt::format("B {} (latency: NCCL's hops)", format_bandwidth(routes->bandwidth))
                         : fmt::format("alpha {}, B {}", format_time(routes->alpha), format_bandwidth(routes->bandwidth));
  if (routes->sharing > 1) text += fmt::format(" shared by {} messages", routes->sharing);
  return text;
}

}  // namespace

std::string describe_hierarchy(const RankLocality& locality, const ModelInput& model) {
  const std::vector<int>& sizes = model.group_sizes;
  const bool even = std::all_of(sizes.begin(), sizes.end(), [&](int size) { return size == sizes.front(); });
  std::string groups;
  if (sizes.size() == 1) {
    groups = fmt::format("one group of {} ranks ({}): the ring's messages", sizes.front(), locality.source);
  } else if (even) {
    groups = fmt::format("{} groups of {} rank{} ({})", sizes.size(), sizes.front(), sizes.front() == 1 ? "" : "s",
                         locality.source);
  } else {
    std::vector<std::string> listed;
    for (int size : sizes) listed.push_back(std::to_string(size));
    groups = fmt::format("{} groups of {} ranks ({}; unequal groups: the model is an estimate)", sizes.size(),
                         join(listed), locality.source);
  }
  std::string text = "hierarchical: " + groups;
  const bool transport = model.message_cost != nullptr;
  if (model.intra) text += "; inside a group " + describe_routes(model.intra, transport);
  if (model.inter) text += "; between groups " + describe_routes(model.inter, transport);
  return text;
}

}  // namespace collsim
