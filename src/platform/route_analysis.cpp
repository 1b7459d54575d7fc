#include "platform/route_analysis.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

namespace sg4 = simgrid::s4u;

namespace collsim {

std::optional<ConcurrentCost> concurrent_cost(const std::vector<HostPair>& messages) {
  if (messages.empty()) return std::nullopt;
  // Every message's route, and how many messages cross each link.
  std::vector<std::vector<sg4::Link*>> routes(messages.size());
  std::map<const sg4::Link*, int> crossing;
  ConcurrentCost cost;
  for (size_t i = 0; i < messages.size(); ++i) {
    double latency = 0;
    messages[i].first->route_to(messages[i].second, routes[i], &latency);
    cost.latency = std::max(cost.latency, latency);
    for (const sg4::Link* link : routes[i]) ++crossing[link];
  }
  // The message left the least bandwidth by some link of its route paces the step.
  double slowest = -1;
  for (const auto& route : routes)
    for (const sg4::Link* link : route) {
      const bool shared = link->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE;
      const int sharing = shared ? crossing[link] : 1;
      const double share = link->get_bandwidth() / sharing;
      if (slowest < 0 || share < slowest) {
        slowest = share;
        cost.bandwidth = link->get_bandwidth();
        cost.sharing = sharing;
      }
    }
  // Routes without links (a host to itself) cost nothing but their latency.
  if (slowest < 0) cost.bandwidth = std::numeric_limits<double>::infinity();
  return cost;
}

}  // namespace collsim
