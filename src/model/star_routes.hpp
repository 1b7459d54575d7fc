#pragma once
// The ranks' routes on a star read once per rank instead of once per pair. A platform file's
// <cluster> is a SimGrid StarZone (since SimGrid 3.31), which routes host a to host b through
// a's up links, then b's down links except those already on the way (StarZone::
// get_local_route, SimGrid 3.32 src/kernel/routing/StarZone.cpp): every route of p ranks
// follows from 2p link lists. The topology bound (model/cut_bound.hpp) builds its cuts' p^2/2
// routes from them instead of asking SimGrid for each (at p = 1024 that was a quarter of
// collsim's own instructions in a ring run).
#include <optional>
#include <vector>

namespace simgrid::s4u {
class Link;
}  // namespace simgrid::s4u

namespace collsim {

class RouteCache;

struct StarRoutes {
  // By rank: its up links and its down links, each without repeats, in SimGrid's order.
  std::vector<std::vector<const simgrid::s4u::Link*>> up, down;
};

// The up and down links of every rank of `routes` (its hosts), or nullopt unless every rank is
// a host of the same StarZone (not a zone behind a gateway), no two ranks share a host, and
// the lists give the routes SimGrid gives from each rank to the next and back (2p routes read).
std::optional<StarRoutes> star_routes(const RouteCache& routes);

// The route from rank `a` to rank `b` (a != b) as SimGrid gives it: up[a], then down[b]
// without the links already in up[a].
std::vector<const simgrid::s4u::Link*> star_route(const StarRoutes& star, int a, int b);

}  // namespace collsim
