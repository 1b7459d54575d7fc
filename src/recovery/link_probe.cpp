#include "recovery/link_probe.hpp"

#include <algorithm>

#include "model/network.hpp"
#include "model/link_sides.hpp"

namespace collsim {

namespace {

// No route between two members other than `end` crosses `link`: it carries `end`'s
// transfers only (a GPU's NIC on a rail), not others' in transit (a torus link).
bool carries_only(const Network& routes, const std::vector<int>& members, int end, std::string_view link) {
  for (size_t i = 0; i < members.size(); ++i)
    for (size_t j = i + 1; j < members.size(); ++j)
      if (members[i] != end && members[j] != end && route_crosses(routes, members[i], members[j], link)) return false;
  return true;
}

}  // namespace

std::optional<OwnLink> own_link(const Network& routes, const std::vector<int>& members, int from, int to, int end) {
  const int other = end == from ? to : from;
  std::optional<OwnLink> best;
  for (std::string_view link : physical_links(routes, from, to)) {
    std::vector<int> side = link_owners(routes, members, link);
    const bool cut = std::find(side.begin(), side.end(), end) != side.end() &&
                     std::find(side.begin(), side.end(), other) == side.end();
    if (!cut) {
      if (best && best->side.size() == 1) continue;
      if (!carries_only(routes, members, end, link)) continue;
      side = {end};
    }
    if (!best || side.size() < best->side.size()) best = OwnLink{link, std::move(side)};
  }
  return best;
}

std::optional<int> witness(const Network& routes, const std::vector<int>& members, int end, const OwnLink& link,
                           const std::vector<int>& other_side, const std::vector<std::string_view>& avoid) {
  auto on = [](const std::vector<int>& side, int world) { return std::find(side.begin(), side.end(), world) != side.end(); };
  // The nearest such member (fewest links each way; the first in order among equals): the
  // probe measures `end`'s link, not the links beyond it. A device's own link on
  // nodes:8:8 at 25% went unseen through a witness on another node (the node's NIC,
  // slower than the device link even at a quarter, set the pace), and the probe of the
  // other end, crossing the busy node NICs, named that end, healthy.
  std::optional<int> nearest;
  size_t fewest = 0;
  for (int world : members) {
    if (on(link.side, world) || on(other_side, world) || !route_crosses(routes, world, end, link.link)) continue;
    if (std::any_of(avoid.begin(), avoid.end(), [&](std::string_view other) {
          return other != link.link && route_crosses(routes, world, end, other);
        }))
      continue;
    const size_t links = routes.route(world, end).links.size() + routes.route(end, world).links.size();
    if (!nearest || links < fewest) {
      nearest = world;
      fewest = links;
    }
  }
  return nearest;
}

std::optional<int> half_witness(const Network& routes, const std::vector<int>& members, int from, int to,
                                bool out_end) {
  const std::vector<int> late = routes.route(from, to).links;  // (a copy: other routes are read meanwhile)
  if (late.empty()) return std::nullopt;
  const int half = out_end ? late.front() : late.back();
  for (int world : members) {
    if (world == from || world == to) continue;
    const std::vector<int>& route = out_end ? routes.route(from, world).links : routes.route(world, to).links;
    if (route.empty() || (out_end ? route.front() : route.back()) != half) continue;
    const bool clear = std::none_of(route.begin(), route.end(), [&](int id) {
      return id != half && std::find(late.begin(), late.end(), id) != late.end();
    });
    if (clear) return world;
  }
  return std::nullopt;
}

std::vector<std::pair<int, int>> next_door(const Network& routes, const std::vector<int>& members, int end, bool into) {
  std::vector<std::pair<int, int>> found;
  for (int world : members) {
    if (world == end) continue;
    const std::vector<int>& route = into ? routes.route(world, end).links : routes.route(end, world).links;
    if (route.size() == 1) found.emplace_back(world, route.front());
  }
  return found;
}

}  // namespace collsim
