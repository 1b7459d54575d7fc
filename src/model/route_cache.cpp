#include "model/route_cache.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <stdexcept>

#include "model/cost_model.hpp"
#include "platform/generators.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

RouteCache::RouteCache(std::vector<sg4::Host*> hosts, std::vector<sg4::Host*> extra)
    : hosts_(std::move(hosts)), extra_(std::move(extra)) {
  if (hosts_.empty()) return;
  for (const sg4::Link* link : sg4::Engine::get_instance()->get_all_links())
    nominal_[link] = {link->get_latency(), link->get_bandwidth()};
  // Room for every link at once: a link's name stays where it is while routes read later add
  // links (recovery reads names as string_views across route reads).
  links_.reserve(nominal_.size());
  simgrid_links_.reserve(nominal_.size());
}

RouteCache::Nominal RouteCache::nominal(const sg4::Link* link) const {
  if (auto it = nominal_.find(link); it != nominal_.end()) return it->second;
  return {link->get_latency(), link->get_bandwidth()};
}

const NetworkRoute& RouteCache::route(int from, int to) const {
  const uint64_t key = static_cast<uint64_t>(static_cast<uint32_t>(from)) << 32 | static_cast<uint32_t>(to);
  auto [it, added] = routes_.try_emplace(key);
  if (added && from != to) read_into(from, to, it->second);
  return it->second;
}

void RouteCache::reread_routes_of(int endpoint) const {
  for (auto& [key, route] : routes_) {
    const int from = static_cast<int>(key >> 32), to = static_cast<int>(key & 0xffffffffU);
    if (from == to || (from != endpoint && to != endpoint)) continue;
    route.links.clear();
    route.latency = 0;
    read_into(from, to, route);
  }
}

void RouteCache::read_links(int from, int to, std::vector<int>& links) const {
  links.clear();
  const uint64_t key = static_cast<uint64_t>(static_cast<uint32_t>(from)) << 32 | static_cast<uint32_t>(to);
  if (auto it = routes_.find(key); it != routes_.end()) {
    links = it->second.links;
    return;
  }
  if (from == to) return;
  read_buffer_.clear();
  endpoint(from)->route_to(endpoint(to), read_buffer_, nullptr);
  for (const sg4::Link* link : read_buffer_) links.push_back(id_of(link));
}

void RouteCache::read_into(int from, int to, NetworkRoute& route) const {
  read_buffer_.clear();
  endpoint(from)->route_to(endpoint(to), read_buffer_, &route.latency);
  bool changed = false;
  route.links.reserve(read_buffer_.size());
  for (const sg4::Link* link : read_buffer_) {
    const int id = id_of(link);
    route.links.push_back(id);
    // (links_ holds each link's latency as built)
    if (links_[static_cast<size_t>(id)].latency != link->get_latency()) changed = true;
  }
  // A latency fault on the way: the route's latency as built (SimGrid's own sum otherwise,
  // to the last bit).
  if (changed) {
    route.latency = 0;
    for (int id : route.links) route.latency += links_[static_cast<size_t>(id)].latency;
  }
}

// Links are numbered in the order routes first cross them.
int RouteCache::id_of(const sg4::Link* link) const {
  auto [id, first] = ids_.try_emplace(link, static_cast<int>(links_.size()));
  if (first) {
    const Nominal as_built = nominal(link);
    links_.push_back({link->get_name(), as_built.bandwidth,
                      link->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE, as_built.latency,
                      link->get_property(switch_link_property) != nullptr});
    simgrid_links_.push_back(link);
  }
  return id->second;
}

const RouteCache& routes_of(const ModelInput& in) {
  const auto* routes = dynamic_cast<const RouteCache*>(in.network.get());
  if (routes == nullptr) throw std::logic_error("routes_of: the model input has no platform routes");
  return *routes;
}

}  // namespace collsim
