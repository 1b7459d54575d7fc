#include "model/star_routes.hpp"

#include <algorithm>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/StarZone.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <unordered_map>
#include <unordered_set>

#include "model/route_cache.hpp"

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::StarZone;

namespace collsim {
namespace {

// SimGrid 3.32 keeps a star's link lists private (StarZone::routes_, by netpoint id, with no
// accessor). A member may be named in an explicit instantiation whatever its access (C++17
// [temp.explicit]/12), which lets collsim read the lists the zone routes by instead of
// restating how SimGrid builds a <cluster> (limiters, loopbacks, backbone, split duplex).
// The routes they give are checked against SimGrid's own (star_routes below).
template <auto Table>
struct StarTable {
  friend const auto& star_table(const StarZone& zone) { return zone.*Table; }
};
template struct StarTable<&StarZone::routes_>;
const auto& star_table(const StarZone& zone);

using Links = std::vector<const sg4::Link*>;

// SimGrid adds a link to a route once (StarZone::add_links_to_route).
template <typename Impl>
Links without_repeats(const std::vector<Impl*>& impls, const std::unordered_map<const void*, const sg4::Link*>& link_of) {
  Links links;
  for (const Impl* impl : impls) {
    const sg4::Link* link = link_of.at(impl);
    if (std::find(links.begin(), links.end(), link) == links.end()) links.push_back(link);
  }
  return links;
}

// The star every host of `hosts` sits in directly, or nullptr.
const StarZone* common_star(const std::vector<sg4::Host*>& hosts) {
  if (hosts.empty()) return nullptr;
  const sg4::NetZone* zone = hosts.front()->get_englobing_zone();
  for (const sg4::Host* host : hosts)
    if (host->get_englobing_zone() != zone) return nullptr;
  return dynamic_cast<const StarZone*>(zone->get_impl());
}

bool same_route(const sg4::Host* from, const sg4::Host* to, const Links& expected) {
  std::vector<sg4::Link*> read;
  from->route_to(to, read, nullptr);
  return std::equal(read.begin(), read.end(), expected.begin(), expected.end());
}

}  // namespace

std::vector<const sg4::Link*> star_route(const StarRoutes& star, int a, int b) {
  const Links& up = star.up[static_cast<size_t>(a)];
  Links route = up;
  for (const sg4::Link* link : star.down[static_cast<size_t>(b)])
    if (std::find(up.begin(), up.end(), link) == up.end()) route.push_back(link);
  return route;
}

std::optional<StarRoutes> star_routes(const RouteCache& routes) {
  const std::vector<sg4::Host*>& hosts = routes.hosts();
  const StarZone* star = common_star(hosts);
  if (star == nullptr || hosts.size() < 2) return std::nullopt;
  std::unordered_set<const sg4::Host*> distinct(hosts.begin(), hosts.end());
  if (distinct.size() != hosts.size()) return std::nullopt;
  std::unordered_map<const void*, const sg4::Link*> link_of;
  for (const sg4::Link* link : sg4::Engine::get_instance()->get_all_links()) link_of[link->get_impl()] = link;
  const auto& table = star_table(*star);
  StarRoutes result;
  for (const sg4::Host* host : hosts) {
    const auto entry = table.find(host->get_netpoint()->id());
    if (entry == table.end() || entry->second.gateway != nullptr || !entry->second.has_links_up() ||
        !entry->second.has_links_down())
      return std::nullopt;
    result.up.push_back(without_repeats(entry->second.links_up, link_of));
    result.down.push_back(without_repeats(entry->second.links_down, link_of));
  }
  const int p = static_cast<int>(hosts.size());
  for (int a = 0; a < p; ++a) {
    const int b = (a + 1) % p;
    if (!same_route(hosts[static_cast<size_t>(a)], hosts[static_cast<size_t>(b)], star_route(result, a, b)) ||
        !same_route(hosts[static_cast<size_t>(b)], hosts[static_cast<size_t>(a)], star_route(result, b, a)))
      return std::nullopt;
  }
  return result;
}

}  // namespace collsim
