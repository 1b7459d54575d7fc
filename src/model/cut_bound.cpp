#include "model/cut_bound.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>
#include <map>
#include <optional>
#include <simgrid/s4u/Link.hpp>
#include <unordered_map>
#include <unordered_set>

#include "model/route_cache.hpp"
#include "model/star_routes.hpp"

namespace collsim {
namespace {

constexpr double unlimited = std::numeric_limits<double>::infinity();

// Dinic's maximum flow on a small graph (a few thousand nodes at most: two per link).
class MaxFlow {
public:
  explicit MaxFlow(int nodes) : edges_of_(static_cast<size_t>(nodes)), level_(static_cast<size_t>(nodes)),
                                next_(static_cast<size_t>(nodes)) {}

  void add_edge(int from, int to, double capacity) {
    edges_of_[static_cast<size_t>(from)].push_back(edges_.size());
    edges_.push_back({to, capacity});
    edges_of_[static_cast<size_t>(to)].push_back(edges_.size());
    edges_.push_back({from, 0});
  }

  double run(int source, int sink) {
    double total = 0;
    while (levels_from(source, sink)) {
      std::fill(next_.begin(), next_.end(), 0);
      while (true) {
        const double pushed = push(source, sink, unlimited);
        if (pushed <= 0) break;
        total += pushed;
        if (total == unlimited) return total;
      }
    }
    return total;
  }

  // After run(): can `node` still be reached from the source through unsaturated edges?
  bool reachable(int node) const { return level_[static_cast<size_t>(node)] >= 0; }

private:
  struct Edge {
    int to;
    double capacity;
  };

  bool levels_from(int source, int sink) {
    std::fill(level_.begin(), level_.end(), -1);
    std::vector<int> queue{source};
    level_[static_cast<size_t>(source)] = 0;
    for (size_t head = 0; head < queue.size(); ++head) {
      const int node = queue[head];
      for (size_t e : edges_of_[static_cast<size_t>(node)]) {
        const Edge& edge = edges_[e];
        if (edge.capacity > 0 && level_[static_cast<size_t>(edge.to)] < 0) {
          level_[static_cast<size_t>(edge.to)] = level_[static_cast<size_t>(node)] + 1;
          queue.push_back(edge.to);
        }
      }
    }
    return level_[static_cast<size_t>(sink)] >= 0;
  }

  double push(int node, int sink, double limit) {
    if (node == sink) return limit;
    auto& list = edges_of_[static_cast<size_t>(node)];
    for (size_t& i = next_[static_cast<size_t>(node)]; i < list.size(); ++i) {
      Edge& edge = edges_[list[i]];
      if (edge.capacity <= 0 || level_[static_cast<size_t>(edge.to)] != level_[static_cast<size_t>(node)] + 1) continue;
      const double pushed = push(edge.to, sink, std::min(limit, edge.capacity));
      if (pushed > 0) {
        edge.capacity -= pushed;
        edges_[list[i] ^ 1].capacity += pushed;
        return pushed;
      }
    }
    return 0;
  }

  std::vector<Edge> edges_;
  std::vector<std::vector<size_t>> edges_of_;
  std::vector<int> level_;
  std::vector<size_t> next_;
};

// A link limits the flows through it unless it is a fatpipe (each flow gets it all).
double capacity_of(const NetworkLink& link) { return link.shared ? link.bandwidth : unlimited; }

struct CutFlow {
  double capacity = 0;
  std::vector<std::string> saturated;
};

// The links that follow each link on some route, kept sorted and unique. A list is
// compacted whenever it has doubled since its last compaction, so that it holds at most
// about twice its distinct links however many routes repeat them (every route from a
// rack crosses the same core link toward the same hosts).
class Successors {
public:
  void add(int from, int to) {
    if (static_cast<size_t>(from) >= lists_.size()) lists_.resize(static_cast<size_t>(from) + 1);
    List& list = lists_[static_cast<size_t>(from)];
    if (!list.links.empty() && list.links.back() == to) return;
    list.links.push_back(to);
    if (list.links.size() >= 2 * list.compacted + 16) compact(list);
  }

  // The links after `from`, sorted; the list is moved out.
  std::vector<int> take(int from) {
    if (static_cast<size_t>(from) >= lists_.size()) return {};
    List& list = lists_[static_cast<size_t>(from)];
    compact(list);
    return std::move(list.links);
  }

private:
  struct List {
    std::vector<int> links;
    size_t compacted = 0;
  };

  static void compact(List& list) {
    std::sort(list.links.begin(), list.links.end());
    list.links.erase(std::unique(list.links.begin(), list.links.end()), list.links.end());
    list.compacted = list.links.size();
  }

  std::vector<List> lists_;
};

// The maximum flow from the ranks `from` to the ranks `to` along their routes: every link
// is a node of capacity bandwidth (split into an in-node and an out-node), consecutive
// links of a route are joined, the source feeds every route's first link and every
// route's last link drains into the sink.
//
// Joins have no capacity limit, so links that are followed by the same set of links
// share one hub node (each link -> hub -> each follower) without changing the flow or
// the minimum cut: on a cluster with a private link per host the p/2 x p/2 joins of a
// bisection (a p^2 graph: 1.6 GiB at p = 8192) become p edges.
CutFlow max_flow_across(const Network& routes, const std::vector<int>& from, const std::vector<int>& to) {
  // p^2 / 4 routes pass through here: nothing per route allocates or searches a tree.
  std::vector<int> node_of_link;  // route cache link id -> node (-1: not met yet)
  std::vector<int> links;         // node -> route cache link id
  std::vector<char> first, last;  // by node: some route starts (ends) with it
  Successors joins;               // (out-node of one link, in-node of the next)
  bool direct = false;            // a route without links: nothing limits it
  auto node_of = [&](int link) {
    if (static_cast<size_t>(link) >= node_of_link.size()) node_of_link.resize(static_cast<size_t>(link) + 1, -1);
    int& node = node_of_link[static_cast<size_t>(link)];
    if (node < 0) {
      node = static_cast<int>(links.size());
      links.push_back(link);
      first.push_back(0);
      last.push_back(0);
    }
    return node;
  };
  std::vector<int> route;
  for (int a : from)
    for (int b : to) {
      routes.read_links(a, b, route);
      if (route.empty()) {
        direct = true;
        continue;
      }
      int previous = -1;
      for (int link : route) {
        const int node = node_of(link);
        if (previous < 0) first[static_cast<size_t>(node)] = 1;
        else joins.add(previous, node);
        previous = node;
      }
      last[static_cast<size_t>(previous)] = 1;
    }
  if (direct) return {unlimited, {}};
  const int count = static_cast<int>(links.size());
  std::map<std::vector<int>, std::vector<int>> sharing;  // followers -> the links they follow
  for (int i = 0; i < count; ++i) {
    std::vector<int> after = joins.take(i);
    if (!after.empty()) sharing[std::move(after)].push_back(i);
  }
  int hubs = 0;
  for (const auto& [after, before] : sharing) hubs += before.size() > 1 ? 1 : 0;
  const int source = 2 * count, sink = 2 * count + 1;
  MaxFlow flow(2 * count + 2 + hubs);
  for (int i = 0; i < count; ++i) flow.add_edge(2 * i, 2 * i + 1, capacity_of(routes.link(links[static_cast<size_t>(i)])));
  int hub = 2 * count + 2;
  for (const auto& [after, before] : sharing) {
    if (before.size() == 1) {
      for (int b : after) flow.add_edge(2 * before.front() + 1, 2 * b, unlimited);
      continue;
    }
    for (int a : before) flow.add_edge(2 * a + 1, hub, unlimited);
    for (int b : after) flow.add_edge(hub, 2 * b, unlimited);
    ++hub;
  }
  for (int node = 0; node < count; ++node)
    if (first[static_cast<size_t>(node)]) flow.add_edge(source, 2 * node, unlimited);
  for (int node = 0; node < count; ++node)
    if (last[static_cast<size_t>(node)]) flow.add_edge(2 * node + 1, sink, unlimited);
  CutFlow result{flow.run(source, sink), {}};
  for (int i = 0; i < count; ++i)
    if (flow.reachable(2 * i) && !flow.reachable(2 * i + 1))
      result.saturated.push_back(routes.link(links[static_cast<size_t>(i)]).name);
  return result;
}

// The graph max_flow_across builds from the |from| x |to| routes, built on a star from each
// rank's up and down links (model/star_routes.hpp) without reading a route: the route from a
// to b is up[a], then down[b] without the links of up[a]. Which of b's down links a route
// skips depends only on which of a's up links are down links of some rank of `to` (a
// backbone both ways): ranks of `from` alike in that share their routes' tails. Links are
// numbered in the order those routes first meet them, as max_flow_across numbers them, and
// every last up link of a group joins every first link of its tails through one hub (as
// max_flow_across's hubs join links followed by the same links).
using StarLink = const simgrid::s4u::Link*;
struct StarCut {
  std::vector<StarLink> links;  // by node
  std::vector<std::pair<int, int>> joins;
  std::vector<std::pair<std::vector<int>, std::vector<int>>> hubs;  // (links before, links after)
  std::vector<int> starts, ends;  // links some route starts (ends) with
  bool direct = false;            // a route without links: nothing limits it

  int node(StarLink link) {
    const auto [at, added] = node_of_link.try_emplace(link, static_cast<int>(links.size()));
    if (added) links.push_back(link);
    return at->second;
  }
  void chain(const std::vector<int>& nodes) {
    for (size_t i = 1; i < nodes.size(); ++i) joins.emplace_back(nodes[i - 1], nodes[i]);
  }
  std::unordered_map<StarLink, int> node_of_link;
};

void sort_unique(std::vector<int>& nodes) {
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
}

StarCut star_cut(const StarRoutes& star, const std::vector<int>& from, const std::vector<int>& to) {
  auto up = [&](int rank) -> const std::vector<StarLink>& { return star.up[static_cast<size_t>(rank)]; };
  auto down = [&](int rank) -> const std::vector<StarLink>& { return star.down[static_cast<size_t>(rank)]; };
  std::unordered_set<StarLink> down_links;
  for (int b : to) down_links.insert(down(b).begin(), down(b).end());
  struct Group {
    std::vector<int> last_up, first_tail;  // nodes: its ranks' last up links, its tails' first links
    bool empty_up = false, empty_tail = false;
  };
  std::map<std::vector<StarLink>, size_t> group_of;  // up links that are down links too -> group
  std::vector<Group> groups;
  StarCut cut;
  for (int a : from) {
    std::vector<int> nodes;
    std::vector<StarLink> skipped;
    for (StarLink link : up(a)) {
      nodes.push_back(cut.node(link));
      if (down_links.count(link) != 0) skipped.push_back(link);
    }
    std::sort(skipped.begin(), skipped.end());
    const auto [at, added] = group_of.try_emplace(skipped, groups.size());
    if (added) {
      groups.emplace_back();
      for (int b : to) {
        std::vector<int> tail;
        for (StarLink link : down(b))
          if (!std::binary_search(skipped.begin(), skipped.end(), link)) tail.push_back(cut.node(link));
        if (tail.empty()) {
          groups.back().empty_tail = true;
          continue;
        }
        cut.chain(tail);
        groups.back().first_tail.push_back(tail.front());
        cut.ends.push_back(tail.back());
      }
    }
    Group& group = groups[at->second];
    if (nodes.empty()) {
      group.empty_up = true;
      continue;
    }
    cut.chain(nodes);
    cut.starts.push_back(nodes.front());
    group.last_up.push_back(nodes.back());
  }
  for (Group& group : groups) {
    sort_unique(group.last_up);
    sort_unique(group.first_tail);
    if (group.empty_up && group.empty_tail) cut.direct = true;
    if (group.empty_up) cut.starts.insert(cut.starts.end(), group.first_tail.begin(), group.first_tail.end());
    if (group.empty_tail) cut.ends.insert(cut.ends.end(), group.last_up.begin(), group.last_up.end());
    if (!group.last_up.empty() && !group.first_tail.empty()) cut.hubs.emplace_back(group.last_up, group.first_tail);
  }
  sort_unique(cut.starts);
  sort_unique(cut.ends);
  std::sort(cut.joins.begin(), cut.joins.end());
  cut.joins.erase(std::unique(cut.joins.begin(), cut.joins.end()), cut.joins.end());
  return cut;
}

CutFlow max_flow_on_star(const RouteCache& routes, const StarRoutes& star, const std::vector<int>& from,
                         const std::vector<int>& to) {
  const StarCut cut = star_cut(star, from, to);
  if (cut.direct) return {unlimited, {}};
  const int count = static_cast<int>(cut.links.size());
  const int source = 2 * count, sink = 2 * count + 1;
  MaxFlow flow(2 * count + 2 + static_cast<int>(cut.hubs.size()));
  for (int i = 0; i < count; ++i) {
    const StarLink link = cut.links[static_cast<size_t>(i)];
    const bool shared = link->get_sharing_policy() != simgrid::s4u::Link::SharingPolicy::FATPIPE;
    flow.add_edge(2 * i, 2 * i + 1, shared ? routes.nominal(link).bandwidth : unlimited);
  }
  for (const auto& [a, b] : cut.joins) flow.add_edge(2 * a + 1, 2 * b, unlimited);
  int hub = 2 * count + 2;
  for (const auto& [before, after] : cut.hubs) {
    for (int a : before) flow.add_edge(2 * a + 1, hub, unlimited);
    for (int b : after) flow.add_edge(hub, 2 * b, unlimited);
    ++hub;
  }
  for (int n : cut.starts) flow.add_edge(source, 2 * n, unlimited);
  for (int n : cut.ends) flow.add_edge(2 * n + 1, sink, unlimited);
  CutFlow result{flow.run(source, sink), {}};
  for (int i = 0; i < count; ++i)
    if (flow.reachable(2 * i) && !flow.reachable(2 * i + 1))
      result.saturated.push_back(cut.links[static_cast<size_t>(i)]->get_name());
  return result;
}

std::string describe_ranks(const std::vector<int>& ranks) {
  if (ranks.size() == 1) return fmt::format("rank {}", ranks.front());
  const bool consecutive = ranks.back() - ranks.front() + 1 == static_cast<int>(ranks.size());
  if (consecutive) return fmt::format("ranks {}-{}", ranks.front(), ranks.back());
  if (ranks.size() <= 8) return fmt::format("ranks {}", fmt::join(ranks, ","));
  return fmt::format("{} ranks ({},...)", ranks.size(), fmt::join(ranks.begin(), ranks.begin() + 4, ","));
}

// Every rank alone (a slow host link shows up here), or on large platforms the ranks
// whose own first link is slowest (symmetric: one of them stands for all).
std::vector<int> single_ranks(const Network& routes, int p, int max_singletons, bool symmetric) {
  std::vector<int> singles(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) singles[static_cast<size_t>(r)] = r;
  if (p <= max_singletons) return singles;
  std::vector<double> first_link(static_cast<size_t>(p), unlimited);
  std::vector<int> links;  // each route read once, not kept
  for (int r = 0; r < p; ++r) {
    links.clear();
    routes.append_route(r, (r + 1) % p, links);
    if (!links.empty()) first_link[static_cast<size_t>(r)] = capacity_of(routes.link(links.front()));
  }
  std::stable_sort(singles.begin(), singles.end(), [&](int a, int b) {
    return first_link[static_cast<size_t>(a)] < first_link[static_cast<size_t>(b)];
  });
  singles.resize(symmetric ? 1 : static_cast<size_t>(max_singletons / 8));
  return singles;
}

}  // namespace

double bytes_across(Collective collective, const std::vector<bool>& in_s, int root, double n) {
  const auto s_count = static_cast<double>(std::count(in_s.begin(), in_s.end(), true));
  const auto p = static_cast<double>(in_s.size());
  const double t_count = p - s_count;
  if (s_count == 0 || t_count == 0) return 0;
  const bool root_in_s = in_s[static_cast<size_t>(root)];
  switch (collective) {
    // T needs the reduction of S's vectors (n elements), and the other way round.
    case Collective::allreduce: return n;
    case Collective::broadcast: return root_in_s ? n : 0;
    case Collective::reduce: return root_in_s ? 0 : n;
    // T's chunks (|T|/p of the vector) depend on S's vectors.
    case Collective::reduce_scatter: return n * t_count / p;
    // T must receive S's chunks.
    case Collective::allgather: return n * s_count / p;
    // every rank of S sends T's ranks a block of n/p each, all different.
    case Collective::alltoall: return n * s_count * t_count / p;
  }
  return 0;
}

CutBound topology_cut_bound(Collective collective, const Network& routes, const RankPlaces& places, int root,
                            double bytes_per_rank, int max_singletons, int max_zones, bool symmetric) {
  const int p = static_cast<int>(places.ranks());
  CutBound best;
  if (p < 2) return best;
  // Candidate sides S (the other side is the rest), each with a name.
  std::vector<std::pair<std::vector<int>, std::string>> sides;
  std::vector<int> half;
  for (int r = 0; r < p / 2; ++r) half.push_back(r);
  sides.emplace_back(half, "(bisection)");
  // The same in platform order, for placements that scatter ranks across the platform.
  std::vector<int> by_host(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) by_host[static_cast<size_t>(r)] = r;
  auto position = [&](int r) { return places.position[static_cast<size_t>(r)]; };
  std::stable_sort(by_host.begin(), by_host.end(), [&](int a, int b) { return position(a) < position(b); });
  by_host.resize(static_cast<size_t>(p / 2));
  std::sort(by_host.begin(), by_host.end());
  if (by_host != half) sides.emplace_back(by_host, "(bisection in platform order)");
  std::map<int, std::vector<int>> zones;
  for (int r = 0; r < p; ++r) zones[places.zone[static_cast<size_t>(r)]].push_back(r);
  // Each zone cut costs p route lookups per rank in it: above max_zones zones (128 nodes of
  // 8 devices would take seconds), every k-th zone in platform order.
  if (zones.size() > 1) {
    std::vector<std::pair<int, int>> ordered;  // by their first rank
    for (const auto& [zone, ranks] : zones) ordered.emplace_back(ranks.front(), zone);
    std::sort(ordered.begin(), ordered.end());
    const size_t stride = (ordered.size() + max_zones - 1) / max_zones;
    std::vector<size_t> sizes_read;  // symmetric: one zone of each size stands for the others
    for (size_t i = 0; i < ordered.size(); i += stride) {
      const int zone = ordered[i].second;
      const size_t size = zones[zone].size();
      if (symmetric && std::find(sizes_read.begin(), sizes_read.end(), size) != sizes_read.end()) continue;
      sizes_read.push_back(size);
      sides.emplace_back(zones[zone], fmt::format("(zone {})", places.zone_names[static_cast<size_t>(zone)]));
    }
  }
  for (int r : single_ranks(routes, p, max_singletons, symmetric)) sides.emplace_back(std::vector<int>{r}, "");

  // On a star every cut is read from 2p link lists, whatever its size.
  const auto* cache = dynamic_cast<const RouteCache*>(&routes);
  std::optional<StarRoutes> star = cache != nullptr ? star_routes(*cache) : std::nullopt;
  if (star && star->up.size() != static_cast<size_t>(p)) star.reset();
  std::vector<std::string> unread;
  for (const auto& [side, label] : sides) {
    if (!star && static_cast<double>(side.size()) * static_cast<double>(p - static_cast<int>(side.size())) > max_cut_routes) {
      unread.push_back(fmt::format("{} {}", describe_ranks(side), label));
      continue;
    }
    std::vector<bool> in_s(static_cast<size_t>(p), false);
    for (int r : side) in_s[static_cast<size_t>(r)] = true;
    std::vector<int> others;
    for (int r = 0; r < p; ++r)
      if (!in_s[static_cast<size_t>(r)]) others.push_back(r);
    std::vector<bool> in_t(in_s.size());
    for (size_t i = 0; i < in_s.size(); ++i) in_t[i] = !in_s[i];
    // Both directions: S -> T and T -> S.
    const std::pair<double, bool> directions[] = {{bytes_across(collective, in_s, root, bytes_per_rank), true},
                                                  {bytes_across(collective, in_t, root, bytes_per_rank), false}};
    for (const auto& [bytes, forward] : directions) {
      if (bytes <= 0) continue;
      const std::vector<int>&source = forward ? side : others, &sink = forward ? others : side;
      const CutFlow flow = star ? max_flow_on_star(*cache, *star, source, sink) : max_flow_across(routes, source, sink);
      const double time = bytes / flow.capacity;
      if (time > best.time) {
        const std::string from = describe_ranks(forward ? side : others), to = describe_ranks(forward ? others : side);
        best = {time, bytes, flow.capacity, fmt::format("{} -> {}{}", from, to, label.empty() ? "" : " " + label),
                flow.saturated, {}};
      }
    }
  }
  if (!unread.empty())
    best.unread = fmt::format("not read: {} (more than {:.0f} routes each)", fmt::join(unread, "; "), max_cut_routes);
  return best;
}

}  // namespace collsim
