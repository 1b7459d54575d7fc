#pragma once
// The platform's routes as the cost model sees them (model/network.hpp): each route read
// from SimGrid once (Host::route_to) the first time a pair asks for it, each link with its
// bandwidth and sharing policy (a fatpipe is not shared; the two halves of a split-duplex
// link are two links, as SimGrid routes them). Endpoints are the hosts given, in order.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/network.hpp"

namespace simgrid::s4u {
class Host;
class Link;
}  // namespace simgrid::s4u

namespace collsim {

class RouteCache : public Network {
public:
  explicit RouteCache(std::vector<simgrid::s4u::Host*> hosts);

  const NetworkRoute& route(int from, int to) const override;
  const NetworkLink& link(int id) const override { return links_[static_cast<size_t>(id)]; }
  const std::vector<simgrid::s4u::Host*>& hosts() const { return hosts_; }
  size_t routes_read() const { return routes_.size(); }

private:
  std::vector<simgrid::s4u::Host*> hosts_;
  mutable std::unordered_map<uint64_t, NetworkRoute> routes_;
  mutable std::unordered_map<const simgrid::s4u::Link*, int> ids_;
  mutable std::vector<NetworkLink> links_;
};

}  // namespace collsim
