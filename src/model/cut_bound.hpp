#pragma once
// The topology-aware lower bound: whatever the algorithm, the bytes that one set of ranks
// must receive from the others have to cross the links between them. For a cut of the
// ranks into S and T, every byte from S to T travels on a route from a host of S to a
// host of T, so the cut's capacity is at most the maximum flow from S to T through the
// links of those routes (each link a capacity of its bandwidth; fatpipe links unlimited).
// Time >= bytes(S -> T) / maxflow(S -> T). The injection bound 2(p-1)/p n/B assumes that
// nothing but the ranks' own links limits them; this one sees the network behind them.
#include <string>
#include <vector>

#include "algorithms/collective.hpp"
#include "model/network.hpp"
#include "model/rank_places.hpp"

namespace collsim {

struct CutBound {
  double time = 0;              // seconds: bytes / capacity of the tightest cut (0 if none)
  double bytes = 0;             // bytes that must cross it (in its tight direction)
  double capacity = 0;          // bytes/s: the maximum flow across it
  std::string cut;              // which cut, e.g. "ranks 0-7 | ranks 8-15 (bisection)"
  std::vector<std::string> bottleneck_links;  // the saturated links of a minimum cut
  std::string unread;           // the cuts left out for their size (empty: every candidate was read)
};

// A cut of S and T reads |S| x |T| routes each way: cuts beyond this many (the bisections
// above p = 8192: p^2 / 4 routes) are left out and named in CutBound::unread.
constexpr double max_cut_routes = 16777216;

// The tightest of these cuts: the bisection in rank order and in platform order (the
// ranks on the first half of the platform's hosts against the rest), every zone holding some
// but not all ranks, and every rank alone (for p > max_singletons only the max_singletons/8
// ranks whose first link is slowest: each cut costs p route lookups and a max flow; above
// max_zones zones, every k-th zone in platform order). `bytes_per_rank` is
// the logical size of one rank's vector.
// The ranks are the endpoints of `routes`, which reads every route the cuts cross; `places`
// says where they sit (platform order, zones).
// `symmetric`: every rank is an image of every other under the platform's symmetry (a
// generated family whose hosts are all alike, every host a rank, in platform order): then one
// zone stands for all zones of its size and, above max_singletons ranks, one rank alone for all.
CutBound topology_cut_bound(Collective collective, const Network& routes, const RankPlaces& places, int root,
                            double bytes_per_rank,
                            int max_singletons = 64, int max_zones = 16, bool symmetric = false);

// Bytes that must cross from the ranks marked true in `in_s` to the others.
double bytes_across(Collective collective, const std::vector<bool>& in_s, int root, double n);

}  // namespace collsim
