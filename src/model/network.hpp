#pragma once
// The network a schedule is priced on: links (bandwidth, shared or not) and the route
// between any two endpoints (its latency and links). Two kinds: the platform's own routes,
// read from SimGrid once per pair (model/route_cache.hpp), and the contention-free star
// of the closed-form formulas (uniform_network below), built from a ModelInput's alpha and B.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace collsim {

struct NetworkLink {
  std::string name;
  double bandwidth = 0;  // bytes/s
  bool shared = true;    // false: a fatpipe, every flow gets the whole bandwidth
  double latency = 0;    // seconds, as built (a route's latency adds up its links')
  bool switch_link = false;  // between two switches, no host's device (platform/generators.hpp)
};

struct NetworkRoute {
  double latency = 0;
  std::vector<int> links;  // link ids, from the source to the destination
};

class Network {
public:
  virtual ~Network() = default;
  virtual const NetworkRoute& route(int from, int to) const = 0;  // endpoints
  virtual const NetworkLink& link(int id) const = 0;
  // The links known: ids 0 to link_count() - 1 (a network that reads its routes when
  // asked knows the links of the routes read so far).
  virtual size_t link_count() const = 0;
  // The links of the route from `from` to `to`, into `links` (a network that keeps the
  // routes it reads may read this one without keeping it).
  virtual void read_links(int from, int to, std::vector<int>& links) const { links = route(from, to).links; }
  // The links of the route from `from` to `to` appended to `links`, its latency returned: for
  // a caller that reads each route once (a step's messages). A network that computes its
  // routes (model/generated_network.hpp) computes this one without keeping it: at p = 131,072
  // keeping every route a schedule meets cost most of the model's time and memory.
  virtual double append_route(int from, int to, std::vector<int>& links) const {
    const NetworkRoute& read = route(from, to);
    links.insert(links.end(), read.links.begin(), read.links.end());
    return read.latency;
  }
};

struct ModelInput;

// Rank r has an uplink and a downlink of bandwidth B of its own and every route costs
// alpha: the star on which the closed-form formulas hold. With locality groups
// (hierarchical), a route inside a group costs in.intra's alpha and B, a route between two
// groups in.inter's, each message getting its share (B / sharing) on links of its own.
std::shared_ptr<const Network> uniform_network(const ModelInput& in);

// `base` with the links `slowed` (link ids) at `factor` of their bandwidth: what a slow
// link costs a schedule, priced on the platform's routes (the coordinator's prediction of
// a regroup around a slow link, recovery/coordinator_regroup.cpp).
std::shared_ptr<const Network> slowed_network(std::shared_ptr<const Network> base, const std::vector<int>& slowed,
                                              double factor);

// `base` with the links given (link id, bytes/s) at those bandwidths.
std::shared_ptr<const Network> network_with_bandwidths(std::shared_ptr<const Network> base,
                                                       const std::vector<std::pair<int, double>>& bandwidths);

struct SharedRoutes;
// What these messages (source, destination endpoints) cost when they all travel at once,
// each link's bandwidth shared equally by the messages crossing it (a fatpipe not at all):
// the largest route latency, and the link that leaves some message the least bandwidth,
// with how many messages cross it. nullopt for no message; a step of routes without links
// has an unlimited bandwidth.
std::optional<SharedRoutes> shared_routes(const Network& network, const std::vector<std::pair<int, int>>& messages);

}  // namespace collsim
