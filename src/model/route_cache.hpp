#pragma once
// The platform's routes as the cost model sees them (model/network.hpp): each route read
// from SimGrid once (Host::route_to) the first time a pair asks for it, each link with its
// bandwidth and sharing policy (a fatpipe is not shared; the two halves of a split-duplex
// link are two links, as SimGrid routes them). Endpoints are the hosts given, in order.
// The one reader of SimGrid's routes for everything that looks at them during a run: the
// cost model, the lower bounds (model/cut_bound.hpp), the hierarchy's step costs and the
// link usage (sim/link_usage.hpp) share one cache and one numbering of the links.
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
  // `extra`: endpoints after the hosts (hosts.size() + i) that are no rank: the switches
  // that reduce in the network (comm/switch_ops.hpp); hosts() lists the ranks' hosts only.
  explicit RouteCache(std::vector<simgrid::s4u::Host*> hosts, std::vector<simgrid::s4u::Host*> extra = {});

  // Read once, then kept.
  const NetworkRoute& route(int from, int to) const override;
  // The links of the route into `links`: the kept route's, or read without keeping it and
  // without its latency (the cut bound's p^2 / 2 pairs would fill memory at large p, and
  // reading them is most of its time).
  void read_links(int from, int to, std::vector<int>& links) const override;
  const NetworkLink& link(int id) const override { return links_[static_cast<size_t>(id)]; }
  const simgrid::s4u::Link* simgrid_link(int id) const { return simgrid_links_[static_cast<size_t>(id)]; }
  size_t links() const { return links_.size(); }
  size_t link_count() const override { return links_.size(); }
  const std::vector<simgrid::s4u::Host*>& hosts() const { return hosts_; }
  // The ranks' hosts and the extra endpoints after them: the routes' endpoints are 0 to endpoints() - 1.
  size_t endpoints() const { return hosts_.size() + extra_.size(); }
  size_t routes_read() const { return routes_.size(); }
  // The platform changed its routes from and to `endpoint` (recovery detoured a GPU's NIC,
  // platform/rail_zone.hpp): the kept ones are read again, in place (references stay valid).
  void reread_routes_of(int endpoint) const;

  // Every link's latency and bandwidth as built, read when the cache is made (before any
  // fault): a route first read after a fault slowed one of its links is priced as built,
  // and whatever measures against expected times (the detector, the link usage) reads the
  // links as built here.
  struct Nominal {
    double latency = 0, bandwidth = 0;
  };
  // A link of the platform as built (its current values if the cache has no hosts).
  Nominal nominal(const simgrid::s4u::Link* link) const;

private:
  void read_into(int from, int to, NetworkRoute& route) const;
  int id_of(const simgrid::s4u::Link* link) const;

  const simgrid::s4u::Host* endpoint(int index) const {
    const auto i = static_cast<size_t>(index);
    return i < hosts_.size() ? hosts_[i] : extra_[i - hosts_.size()];
  }

  std::vector<simgrid::s4u::Host*> hosts_, extra_;
  std::unordered_map<const simgrid::s4u::Link*, Nominal> nominal_;
  mutable std::unordered_map<uint64_t, NetworkRoute> routes_;
  mutable std::unordered_map<const simgrid::s4u::Link*, int> ids_;
  mutable std::vector<NetworkLink> links_;
  mutable std::vector<const simgrid::s4u::Link*> simgrid_links_;
  mutable std::vector<simgrid::s4u::Link*> read_buffer_;  // reused by every read (no allocation per route)
};

struct ModelInput;
// The platform's routes under a model input read from a platform (a logic error otherwise).
const RouteCache& routes_of(const ModelInput& in);

}  // namespace collsim
