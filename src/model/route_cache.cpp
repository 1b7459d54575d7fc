#include "model/route_cache.hpp"

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

namespace sg4 = simgrid::s4u;

namespace collsim {

RouteCache::RouteCache(std::vector<sg4::Host*> hosts) : hosts_(std::move(hosts)) {}

const NetworkRoute& RouteCache::route(int from, int to) const {
  const uint64_t key = static_cast<uint64_t>(static_cast<uint32_t>(from)) << 32 | static_cast<uint32_t>(to);
  auto [it, added] = routes_.try_emplace(key);
  if (!added || from == to) return it->second;
  std::vector<sg4::Link*> links;
  hosts_[static_cast<size_t>(from)]->route_to(hosts_[static_cast<size_t>(to)], links, &it->second.latency);
  for (const sg4::Link* link : links) {
    auto [id, first] = ids_.try_emplace(link, static_cast<int>(links_.size()));
    if (first)
      links_.push_back({link->get_name(), link->get_bandwidth(),
                        link->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE});
    it->second.links.push_back(id->second);
  }
  return it->second;
}

}  // namespace collsim
