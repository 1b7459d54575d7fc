#pragma once
// What the messages of one step cost when they all travel at once: each link's bandwidth
// is shared equally by the messages that cross it (SimGrid's ideal network), the two
// halves of a split-duplex link being separate links (_UP, _DOWN) and a fat pipe not
// shared at all.
#include <optional>
#include <utility>
#include <vector>

namespace simgrid::s4u {
class Host;
}

namespace collsim {

struct ConcurrentCost {
  double latency = 0;    // the largest route latency among the messages
  double bandwidth = 0;  // the bottleneck: the link that leaves some message the least
  int sharing = 1;       // bandwidth, and how many of the messages cross it
};

using HostPair = std::pair<const simgrid::s4u::Host*, const simgrid::s4u::Host*>;

// The cost of sending these messages (source, destination) at once; nullopt for none.
std::optional<ConcurrentCost> concurrent_cost(const std::vector<HostPair>& messages);

}  // namespace collsim
