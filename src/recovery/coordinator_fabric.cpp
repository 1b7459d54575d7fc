// Rule 4f, the fabric: late transfers whose routes share a switch link, a link that no rank
// owns (not the first link out or the last link in of any member's route, and not the only
// way to a minority of the members: a dragonfly's global link, a fat tree's link between a
// leaf and a top switch, a rail's uplink, the link between two equal racks). Its slowness is
// the fabric's fault, never a rank's: nobody is dropped for it. The coordinator localizes it
// from the routes of the late transfers (the halves every one of them crosses, less those
// that transfers on time at full pace crossed since), clears the late transfers' ends
// (their own links kept pace, or a probe of each across its own link alone runs at full
// pace), then regroups the same members in an order whose pairs keep off the links; where
// none does, or none pays, it keeps everyone, says so once per epoch, and takes the links'
// measured pace as their norm from then on (their transfers are no longer late: the same
// evidence is not judged again).
#include "recovery/coordinator_impl.hpp"

namespace collsim::coordination {

// The late transfers of this epoch, the way their data went (from, to).
std::vector<std::pair<int, int>> Coordinator::late_flows_seen() const {
  std::vector<std::pair<int, int>> flows;
  for (const auto& [pair, seen] : late_seen_) {
    if (seen.into_lower) flows.emplace_back(pair.second, pair.first);
    if (seen.into_higher) flows.emplace_back(pair.first, pair.second);
  }
  return flows;
}

// Whether the link half `half` is some member's own: the first link of a route out of a
// member or the last of a route into one. Routes are static and destination-ordered (a
// torus's dimension order, a fat tree's d-mod-k, a dragonfly's minimal routes): a host that
// forwards the late data onwards sends through the same half on its own route to the same
// destination. So the routes to `to` and from `from` of the members tell. Kept by half.
bool Coordinator::members_own(int half, int from, int to) {
  if (const auto known = members_own_.find(half); known != members_own_.end()) return known->second;
  const Network& routes = run_.network();
  bool own = false;
  for (int world : membership_.current().members()) {
    if (world != to && routes.route(world, to).links.front() == half) own = true;
    if (world != from && routes.route(from, world).links.back() == half) own = true;
    if (own) break;
  }
  members_own_[half] = own;
  return own;
}

// Whether the physical link of `half` is the only way between a minority of the members
// and the others (a node's NIC, a leaf's uplink): theirs (the fault's `ranks` say so), for
// rule 4b. Kept by epoch.
bool Coordinator::owned_by_a_side(int half) {
  const std::string physical_name(physical(half));
  const auto key = std::pair{membership_.current().epoch(), physical_name};
  if (const auto known = cuts_.find(key); known != cuts_.end()) return known->second;
  const bool cut = !link_owners(run_.network(), membership_.current().members(), physical_name).empty();
  cuts_[key] = cut;
  return cut;
}

// The link halves that members' last transfers on time crossed: each at full pace (at least
// recovery.straggler_threshold of its expected pace, in all and its bytes') and over after `since`.
std::set<int> Coordinator::halves_on_time(double since) const {
  const Network& routes = run_.network();
  const double full_pace = run_.scenario->recovery.straggler_threshold;
  std::set<int> cleared;
  for (int world : membership_.current().members()) {
    const RankActivity& rank = detector_.activity(world);
    if (rank.on_time_peer < 0 || rank.on_time_at <= since || rank.on_time_pace < full_pace ||
        rank.on_time_rate_pace < full_pace)
      continue;
    const auto [from, to] = rank.on_time_receive ? std::pair{rank.on_time_peer, world} : std::pair{world, rank.on_time_peer};
    for (int half : routes.route(from, to).links) cleared.insert(half);
  }
  return cleared;
}

// The switch link halves that `flows` crossed inside their routes (neither a route's first
// link nor its last), of the physical links that every one of them crossed so (a link
// between two racks carries a ring's two crossings, one each way), that no member owns, and
// whose halves no transfer on time has crossed since `since` where late data did.
std::vector<int> Coordinator::fabric_suspects(const std::vector<std::pair<int, int>>& flows, double since) {
  const Network& routes = run_.network();
  std::vector<std::string_view> common;
  std::vector<int> halves;
  for (size_t i = 0; i < flows.size(); ++i) {
    const std::vector<int>& links = routes.route(flows[i].first, flows[i].second).links;
    std::vector<std::string_view> inner;
    for (size_t k = 1; k + 1 < links.size(); ++k) {
      inner.push_back(physical(links[k]));
      if (std::find(halves.begin(), halves.end(), links[k]) == halves.end()) halves.push_back(links[k]);
    }
    if (i == 0) common = inner;
    else std::erase_if(common, [&](std::string_view link) { return std::find(inner.begin(), inner.end(), link) == inner.end(); });
    if (common.empty()) return {};
  }
  std::erase_if(halves, [&](int half) { return std::find(common.begin(), common.end(), physical(half)) == common.end(); });
  const auto [from, to] = flows.front();
  const std::set<int> cleared = halves_on_time(since);
  std::set<std::string_view> kept_pace;  // physical links each of whose late halves a transfer on time crossed
  for (std::string_view link : common)
    if (std::all_of(halves.begin(), halves.end(), [&](int half) { return physical(half) != link || cleared.count(half); }))
      kept_pace.insert(link);
  std::erase_if(halves, [&](int half) {
    return kept_pace.count(physical(half)) || members_own(half, from, to) || owned_by_a_side(half);
  });
  return halves;
}

// Whether `end`'s own links on the late routes (its way out to the late transfers it sent,
// its way in from those it received) kept pace: a transfer of its own through the same link
// ended on time at full pace after the late ones were half way to their expected end.
bool Coordinator::end_kept_pace(int end, const std::vector<std::pair<int, int>>& flows) const {
  const double full_pace = run_.scenario->recovery.straggler_threshold;
  for (auto [from, to] : flows) {
    if (from != end && to != end) continue;
    const int other = from == end ? to : from;
    const auto seen = late_seen_.find({std::min(from, to), std::max(from, to)});
    if (seen == late_seen_.end()) return false;
    const double half_way = (seen->second.began + seen->second.since) / 2;
    auto clears = [&](int peer, const RankActivity& record) {
      return peer >= 0 && peer != other && record.on_time_at > half_way && record.on_time_pace >= full_pace &&
             clears_port(end, other, peer);
    };
    bool kept = clears(detector_.activity(end).on_time_peer, detector_.activity(end));
    for (int member : membership_.current().members())
      if (!kept && detector_.activity(member).on_time_peer == end) kept = clears(member, detector_.activity(member));
    if (!kept) return false;
  }
  return true;
}

// The ranks every one of `flows` involves.
std::vector<int> Coordinator::flows_in_common(const std::vector<std::pair<int, int>>& flows) {
  std::vector<int> common{flows.front().first, flows.front().second};
  for (auto [from, to] : flows) std::erase_if(common, [&](int world) { return world != from && world != to; });
  return common;
}

}  // namespace collsim::coordination

namespace collsim::coordination {

// 4f itself. True when it decided: the fabric (a regroup, or everyone kept), a rank whose
// own link a probe found slow (a root, priced as any), or a doubt between the fabric and
// the late transfers' ends that a second look (with probes) settles. False when the late
// transfers share no switch link, or transfers broke (links down: rules 1 to 1d).
bool Coordinator::judge_fabric(const Waits& waits, bool second_look, Judgement& out) {
  if (failures_ || !waits.broken.empty() || late_seen_.empty()) return false;
  const std::vector<std::pair<int, int>> flows = late_flows_seen();
  if (flows.empty()) return false;
  double began = std::numeric_limits<double>::infinity();
  for (const auto& [pair, seen] : late_seen_) began = std::min(began, seen.began);
  const std::vector<int> suspects = fabric_suspects(flows, began);
  if (suspects.empty()) return false;
  note_pair_slowdowns();
  const std::vector<int> ends = flows_in_common(flows);
  for (int end : ends) {
    if (end_kept_pace(end, flows)) {
      out.evidence.push_back(fmt::format("{}'s own link kept pace: a transfer of its through it ended on time", end));
      continue;
    }
    if (!second_look && !undecided_before(ends)) {
      out.ambiguous = ends;
      out.rule = fmt::format("every late transfer crosses {}, which no rank owns, and the own link of rank {}",
                             fabric_names(suspects), fmt::join(ends, " or "));
      return true;
    }
    const ProbeVerdict probed = probe_own_link(end, flows, out);
    if (probed == ProbeVerdict::slow) return true;
    if (probed == ProbeVerdict::none) {
      out.ambiguous = ends;
      out.rule = fmt::format("every late transfer crosses {}, which no rank owns, and the own link of rank {}, "
                             "which no probe can measure alone",
                             fabric_names(suspects), end);
      return true;
    }
  }
  fabric_verdict(suspects, flows, out);
  return true;
}

// The fabric is at fault: the same members regroup in an order that keeps off the links
// (both ways: a switch link's fault slows both its halves), or, when none does or none
// pays, everyone is kept and the links' pace becomes their norm (fabric_kept).
void Coordinator::fabric_verdict(const std::vector<int>& suspects, const std::vector<std::pair<int, int>>& flows,
                                 Judgement& out) {
  double slowdown = 1;
  for (const auto& [pair, seen] : late_seen_) slowdown = std::max(slowdown, seen.slowdown);
  const std::string names = fabric_names(suspects);
  out.rule = fmt::format("every late transfer crosses {}, which no rank owns (a switch link): the fabric's fault, "
                         "not a rank's", names);
  note_late_slowdowns(out);
  for (auto [from, to] : flows) run_.network().route(to, from);  // the links' other halves
  const std::vector<int> halves = both_halves(suspects);
  late_seen_.clear();  // the links explain them: a later window judges afresh
  for (int half : halves) out.slow_links.emplace_back(run_.network().link(half).name);
  const FabricRegroup regroup = regroup_fabric(halves, slowdown, out);
  if (regroup == FabricRegroup::regrouped) {
    out.rule += fmt::format("; the same members regroup {}, where the algorithm's pairs avoid {}", new_order(out.order),
                            suspects.size() > 1 ? "them" : "it");
    return;
  }
  // Which it is: no arrangement of the members keeps the algorithm's pairs off the links
  // (every ring crosses a link between two racks twice), or the one found does not pay.
  out.rule += regroup == FabricRegroup::none_avoids
                  ? "; no order of the algorithm's pairs keeps off it (every arrangement of the members crosses it): "
                    "everyone kept"
                  : "; no order of the algorithm's pairs that keeps off it pays: everyone kept";
  out.fabric_halves = halves;
  out.fabric_slowdown = slowdown;
}

// Both halves of each physical link of `halves` that the routes read so far know (the way
// back of a switch link is on the reverse routes: read first).
std::vector<int> Coordinator::both_halves(const std::vector<int>& halves) const {
  std::vector<std::string_view> names;
  for (int half : halves) names.push_back(physical(half));
  std::vector<int> both;
  const Network& routes = run_.network();
  for (size_t id = 0; id < routes.link_count(); ++id)
    if (std::find(names.begin(), names.end(), physical(static_cast<int>(id))) != names.end())
      both.push_back(static_cast<int>(id));
  return both;
}

// The physical links of `halves`, named.
std::string Coordinator::fabric_names(const std::vector<int>& halves) const {
  std::vector<std::string_view> names;
  for (int half : halves)
    if (std::find(names.begin(), names.end(), physical(half)) == names.end()) names.push_back(physical(half));
  return fmt::format("link{} {}", names.size() > 1 ? "s" : "", fmt::join(names, ", "));
}

// How much slower than expected each late transfer under way runs, kept with its pair: its
// bytes' rate since the fault (a slow link's bandwidth cut, which prices the regroup).
void Coordinator::note_pair_slowdowns() {
  for (int waiter : late_waiters_) {
    const int peer = detector_.activity(waiter).peer;
    const auto seen = late_seen_.find({std::min(waiter, peer), std::max(waiter, peer)});
    if (seen != late_seen_.end())
      seen->second.slowdown = std::max(seen->second.slowdown, detector_.rate_slowdown(waiter));
  }
}

// A probe across `end`'s own link on one of its late routes, from or to the nearest member
// whose route crosses that link and no other link of the late route (recovery/link_probe.hpp).
Coordinator::ProbeVerdict Coordinator::probe_own_link(int end, const std::vector<std::pair<int, int>>& flows,
                                                       Judgement& out) {
  const auto flow = std::find_if(flows.begin(), flows.end(), [&](auto f) { return f.first == end || f.second == end; });
  const auto [from, to] = *flow;
  const std::vector<int>& members = membership_.current().members();
  const Network& routes = run_.network();
  const std::optional<OwnLink> own = own_link(routes, members, from, to, end);
  if (!own) return ProbeVerdict::none;
  const int other = end == from ? to : from;
  const std::optional<int> witnessed = witness(routes, members, end, *own, {other}, physical_links(routes, from, to));
  if (!witnessed) return ProbeVerdict::none;
  const std::pair<int, int> way = end == from ? std::pair{end, *witnessed} : std::pair{*witnessed, end};
  const auto seen = late_seen_.find({std::min(from, to), std::max(from, to)});
  const double bytes = std::max(detector_.activity(end).bytes, detector_.activity(other).bytes);
  const std::optional<Probed> probed = run_probes({way}, {std::string(own->link)}, bytes, out);
  if (!probed || seen == late_seen_.end()) return ProbeVerdict::none;
  const double pace = probe_pace(probed->outcomes.front());
  if (!probed->slow.front()) {
    out.evidence.push_back(fmt::format("{}'s own link {} ran at {:.3g} of its expected pace", end, own->link, pace));
    return ProbeVerdict::clear;
  }
  out.roots = own->side;
  out.rule = fmt::format("every late transfer crosses {}'s own link {}, and a probe across it alone ran at {:.3g} of "
                         "its expected pace{}", end, own->link, pace,
                         probed->outcomes.front().late ? " (cut at its deadline)" : "");
  add_scores(members, out);
  out.slowdown = std::max(out.slowdown, 1 / pace);
  return ProbeVerdict::slow;
}

// The same members in an order whose pairs keep off `halves` (and every half avoided
// before), when one is found that the prices say pays (regrouped); none_avoids when the
// search finds none; not_paying when the one found does not pay, when an order was sought
// for each of them already, and when they are not slow enough to matter.
Coordinator::FabricRegroup Coordinator::regroup_fabric(const std::vector<int>& halves, double slowdown, Judgement& out) {
  std::vector<int> avoided = avoided_halves_;
  bool added = false;
  for (int half : halves) {
    if (std::find(avoided.begin(), avoided.end(), half) == avoided.end()) avoided.push_back(half);
    if (std::find(sought_halves_.begin(), sought_halves_.end(), half) != sought_halves_.end()) continue;
    sought_halves_.push_back(half);
    added = true;
  }
  if (!added || slowdown * run_.scenario->recovery.straggler_threshold < 1) return FabricRegroup::not_paying;
  out.order = order_avoiding(avoided, membership_.current().members(), false, true);
  const bool found = !out.order.empty();
  if (!regroup_prices(avoided, out.order, slowdown, out)) {  // keeping's price alone when no order avoids them
    out.order.clear();
    return found ? FabricRegroup::not_paying : FabricRegroup::none_avoids;
  }
  avoided_halves_ = std::move(avoided);
  out.redo = out.certain = true;
  return FabricRegroup::regrouped;
}

// A rank dropped for its slow transfers (not dead, not computing) leaves its own links as
// slow as they were (the evidence named the rank, its ports, not one of them): on a torus
// its host still forwards other ranks' routes over them (SimGrid's routes are static). Its
// links to every member of the group it leaves, kept with the rank for judge_dropped_link.
void Coordinator::note_dropped_links(const Judgement& judgement) {
  if (judgement.certain || judgement.compute_bound || judgement.roots.empty() || late_seen_.empty()) return;
  for (int root : judgement.roots)
    for (int other : membership_.current().members()) {
      if (other == root) continue;
      for (int id : end_links(root, other)) {
        if (id < 0) continue;
        const std::string_view link = physical(id);
        if (std::none_of(dropped_links_.begin(), dropped_links_.end(), [&](const auto& known) { return known.first == link; }))
          dropped_links_.emplace_back(std::string(link), root);
      }
    }
}

// 4a, after a drop. Every late transfer involves `common`, and each crosses a link that a
// rank dropped for its slow transfers left behind (on a torus, its host's links: the routes
// between its neighbours still cross them): those links explain them, not `common`, whose
// own link one may be. Dropping `common` would only move the links onto others' routes:
// nobody is dropped, and the same members regroup in an order whose pairs avoid them, if
// one does. (`direct` on torus:4x4x4, rank 16's NIC at 1% and rank 24 preempted: 16 was
// dropped, and then rank 19, healthy, whose routes to 1, 13, 17, 21, 29 and 33 each cross
// one of host 16's links, no one link all of them.)
bool Coordinator::judge_dropped_link(int common, const std::vector<std::pair<int, int>>& late, const Waits& waits,
                                     Judgement& out) {
  if (dropped_links_.empty() || !waits.broken.empty()) return false;
  const Network& routes = run_.network();
  std::vector<std::string_view> links;
  std::vector<int> dropped;
  for (auto [a, b] : late) {
    bool explained = false;
    for (const auto& [link, rank] : dropped_links_) {
      if (!route_crosses(routes, a, b, link)) continue;
      explained = true;
      if (std::find(links.begin(), links.end(), link) == links.end()) links.emplace_back(link);
      if (std::find(dropped.begin(), dropped.end(), rank) == dropped.end()) dropped.push_back(rank);
    }
    if (!explained) return false;
  }
  const char* them = links.size() > 1 ? "them" : "it";
  out.rule = fmt::format("every late transfer involves rank {} but crosses a link left slow by rank{} {} (dropped for "
                         "its slow transfers; its host still forwards others' routes), link{} {}: the link is slow, "
                         "not the rank",
                         common, dropped.size() > 1 ? "s" : "", fmt::join(dropped, ", "), links.size() > 1 ? "s" : "",
                         fmt::join(links, ", "));
  for (std::string_view link : links) out.slow_links.emplace_back(link);
  late_seen_.clear();  // the links explain them: a later window judges afresh
  if (!regroup_avoiding(links, waits.late_flows, out)) {
    out.rule += "; nobody dropped";
    return true;
  }
  out.rule += fmt::format("; the same members regroup {}, where the algorithm's pairs avoid {}", new_order(out.order), them);
  return true;
}

}  // namespace collsim::coordination
