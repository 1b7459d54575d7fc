// The coordinator regroups the same members in an order whose pairs keep off slow or broken links.
#include "recovery/coordinator_impl.hpp"

namespace collsim::coordination {

// The same members in an order whose pairs avoid the halves of `links` that `flows`
// cross, and every half avoided before in this run (a slow link stays slow: two orders,
// each avoiding one of two slow links, would otherwise take turns for ever). The
// collective under way is abandoned and redone in it (as after rule 1c). False when no
// order avoids them, and when an order was sought for each of these halves already,
// found or not (an order that still meets them would only move them). Each search adds
// a half, so searches and regroups are few.
// `exhaustive`: the link is known to be at fault, not a rank (judge_link_slow_both_ways):
// when no swap helps, the orders are searched place by place as for a link down.
bool Coordinator::regroup_avoiding(const std::vector<std::string_view>& links, const std::vector<std::pair<int, int>>& flows,
                                   Judgement& out, bool exhaustive) {
  // Every half of these links is avoided, a half sought before in vain too (the slow one
  // may be among them); a search happens only when one of them is new.
  std::vector<int> avoided = avoided_halves_;
  bool added = false;
  for (int half : slow_halves(flows, links)) {
    if (std::find(avoided.begin(), avoided.end(), half) == avoided.end()) avoided.push_back(half);
    if (std::find(sought_halves_.begin(), sought_halves_.end(), half) != sought_halves_.end()) continue;
    sought_halves_.push_back(half);
    added = true;
  }
  if (!added) return false;
  out.order = order_avoiding(avoided, membership_.current().members(), false, exhaustive);
  if (out.order.empty() || !regrouping_pays(avoided, out.order, out)) {
    out.order.clear();
    return false;
  }
  avoided_halves_ = std::move(avoided);
  out.redo = out.certain = true;
  return true;
}

// 1d. A transfer broke between two members that both answer, on a link down that neither
//     owns (on a torus, a link that carries other ranks' routes; SimGrid's routes are
//     static): no rank to drop is right. The same members regroup in an order whose
//     pairs cross no link half that is down (the route cache's, read so far: the group's
//     routes), and that order is kept through later drops and joins, like one around a
//     slow link. Unlike a slow link's there is nothing to price: the collective cannot
//     finish across the link. False when no order avoids them (direct: every order has
//     the same pairs), or the group's order avoids them already.
bool Coordinator::regroup_around_down_links(Judgement& out) {
  const Network& routes = run_.network();
  std::vector<int> avoided = halves_kept_off();
  std::vector<int> down;
  for (int half : avoided)
    if (!engine_.link_up(half)) down.push_back(half);
  std::sort(down.begin(), down.end());  // named in the route cache's order
  std::vector<std::string> names;
  for (int half : down) {
    names.emplace_back(routes.link(half).name);
    if (std::find(sought_halves_.begin(), sought_halves_.end(), half) == sought_halves_.end())
      sought_halves_.push_back(half);
  }
  // Sought again when a drop or a join has put a down half back on the group's pairs
  // (the members changed, and no order of the new ones kept off it): unlike a slow
  // link's, an order that crosses it cannot finish, and the search ends (it is empty
  // once the order avoids every half down, each search adding the halves read since).
  if (names.empty()) return false;
  std::vector<int> order = order_avoiding(avoided);
  if (order.empty()) return false;
  avoided_halves_ = std::move(avoided);
  out.order = std::move(order);
  out.redo = out.certain = true;
  out.ambiguous.clear();
  out.rule = fmt::format("a transfer broke between members that both answer, on link{} {}, down and owned by "
                         "neither; the same members regroup {}, where the algorithm's pairs avoid {}",
                         names.size() > 1 ? "s" : "", fmt::join(names, ", "), new_order(out.order),
                         names.size() > 1 ? "them" : "it");
  return true;
}

// A regroup redoes the collective under way in full; keeping the order finishes it and
// the rounds left. Both are priced by the contention model on the platform's routes with
// the slow `halves` at 1 / s of their bandwidth (s: the late transfers' median slowdown of
// their bytes since the fault, Detector::rate_slowdown):
// a slow link gates every step of a ring but only some transfers of a tree (a binary
// tree on torus:4x4x4 with a link at 25%: its transfers x4, its rounds x1.03, and two
// redos cost more than they gained). The regroup pays when it is predicted 10% faster
// and s is at least 1 / straggler_threshold. In the evidence either way.
bool Coordinator::regrouping_pays(const std::vector<int>& halves, const std::vector<int>& order, Judgement& out) const {
  std::vector<double> slowdowns;
  for (int waiter : late_waiters_) slowdowns.push_back(detector_.rate_slowdown(waiter));  // the links' bandwidth cut
  if (slowdowns.empty()) return false;
  const double slowdown = std::max(1.0, median_of(slowdowns));
  if (slowdown * run_.scenario->recovery.straggler_threshold < 1) return false;
  // A late transfer that has moved no byte past its deadline (a link with seconds of
  // latency) has no pace to price: keeping it could take any time.
  for (int waiter : late_waiters_)
    if (detector_.transfer_start(waiter) >= 0 && detector_.transfer_moved(waiter) <= 0) {
      out.evidence.push_back(fmt::format("{}'s late transfer with {} has moved no byte: the order is not kept", waiter,
                                         detector_.activity(waiter).peer));
      return true;
    }
  return regroup_prices(halves, order, slowdown, out);
}

// The prices of regrouping_pays, with the slow `halves` at 1 / `slowdown` of their
// bandwidth, in useful work (the same workers either way: samples per second follow the
// time). Without an `order` (none keeps off them), keeping's alone.
bool Coordinator::regroup_prices(const std::vector<int>& halves, const std::vector<int>& order, double slowdown,
                                 Judgement& out) const {
  const CommGroup& group = membership_.current();
  // How much of the collective a redo throws away: the late ranks' progress (the least).
  double done = 1;
  for (int waiter : late_waiters_) done = std::min(done, detector_.collective_done(waiter));
  const std::shared_ptr<const Network> slowed = slowed_for_pricing(halves, slowdown);
  auto priced = [&](const std::vector<int>& members) {
    ModelInput in = run_.model_for(members);
    in.network = slowed;
    return model_time(*run_.algorithm, in);
  };
  const double kept = priced(group.members());
  const int remaining = run_.scenario->training.rounds - lowest_round(group, {});
  const double later = std::max(0, remaining - 1);
  const double compute = compute_seconds(run_);
  const double keep = (1 - done) * kept + later * (compute + kept);
  const int p = static_cast<int>(group.members().size());
  out.prices = decision_prices(run_, remaining);
  add_choice(out.prices, "keep", keep, p);
  if (order.empty()) {
    out.evidence.push_back(fmt::format("prediction for {} remaining round(s), {:.3g} of this collective done, the slow "
                                       "links at 1/{:.3g} of their bandwidth: keep the order {:.9g} s; no order "
                                       "keeps off them", remaining, done, slowdown, keep));
    return choose(out.prices) == "regroup";
  }
  const double regrouped = priced(order);
  const double regroup = verdict_seconds(run_) + regrouped + later * (compute + regrouped);
  add_choice(out.prices, "regroup", regroup, p);
  out.evidence.push_back(fmt::format("prediction for {} remaining round(s), {:.3g} of this collective done, the slow "
                                     "links at 1/{:.3g} of their bandwidth: keep the order {:.9g} s, regroup {:.9g} s",
                                     remaining, done, slowdown, keep, regroup));
  // A margin for what the model does not see: the verdicts, and the detection of the
  // late transfers again in the new order when it meets a second slow link.
  return choose(out.prices, regroup_margin) == "regroup";
}

// The platform with the slow `halves` at the pace the late transfers measured: each ran
// `slowdown` times slower than expected, so the link gives it 1 / slowdown of its route's
// narrowest link (as built), which need not be the slow link itself. A link between racks
// ten times faster than the hosts' links, at 1% of its bandwidth, paces their transfers at
// a tenth of a host link: priced at 1 / slowdown of its own bandwidth it stayed faster than
// the hosts' links, and keeping looked free (a ring of 16 on four racks, 39 ms rounds kept
// where the prices said 3.9 ms, and no regroup).
std::shared_ptr<const Network> Coordinator::slowed_for_pricing(const std::vector<int>& halves, double slowdown) const {
  const Network& routes = run_.network();
  double narrowest = std::numeric_limits<double>::infinity();
  for (int waiter : late_waiters_) {
    const int peer = detector_.activity(waiter).peer;
    if (peer < 0 || peer == waiter) continue;
    for (auto [from, to] : {std::pair{waiter, peer}, std::pair{peer, waiter}}) {
      const std::vector<int>& links = routes.route(from, to).links;
      if (std::none_of(links.begin(), links.end(), [&](int id) {
            return std::find(halves.begin(), halves.end(), id) != halves.end();
          }))
        continue;
      for (int id : links) narrowest = std::min(narrowest, routes.link(id).bandwidth);
    }
  }
  std::vector<std::pair<int, double>> bandwidths;
  for (int half : halves) bandwidths.emplace_back(half, std::min(routes.link(half).bandwidth, narrowest) / slowdown);
  return network_with_bandwidths(run_.model.network, bandwidths);
}

// How `order` differs from the group's: a rotation names its new group rank 0, any
// other order the members that moved.
std::string Coordinator::new_order(const std::vector<int>& order) const {
  const std::vector<int>& members = membership_.current().members();
  std::vector<int> rotated = members;
  const auto first = std::find(rotated.begin(), rotated.end(), order.front());
  if (first != rotated.end()) std::rotate(rotated.begin(), first, rotated.end());
  if (rotated == order) return fmt::format("with rank {} first (group rank 0)", order.front());
  std::vector<int> moved;
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != members[i]) moved.push_back(order[i]);
  return fmt::format("in a new order (ranks {} move to other group ranks)", fmt::join(moved, ", "));
}

// Of the `transit` links, the halves (route cache ids) that the data of every late
// transfer crosses: the slow way of a split-duplex link (the other way may be healthy).
std::vector<int> Coordinator::slow_halves(const std::vector<std::pair<int, int>>& flows,
                                          const std::vector<std::string_view>& transit) const {
  if (flows.empty()) return {};
  const Network& routes = run_.network();
  std::vector<int> halves;
  for (int id : routes.route(flows.front().first, flows.front().second).links)
    if (std::find(transit.begin(), transit.end(), physical(id)) != transit.end()) halves.push_back(id);
  for (auto [from, to] : flows) {
    const std::vector<int>& route = routes.route(from, to).links;
    std::erase_if(halves, [&](int id) { return std::find(route.begin(), route.end(), id) == route.end(); });
  }
  return halves;
}

// Re-rooting: the members in an order whose pairs (the algorithm's partners, by group
// rank) cross none of the link `halves` either way (recovery/order_search.hpp: a rotation of
// the current order first, so that a ring keeps its neighbours, then swaps). Empty when
// the current order avoids them already, when the search finds no order, and when the
// result belongs to a rank (only an allreduce's is everyone's; a sharded run's shards
// follow the group rank). An algorithm whose every rank talks to most others (direct)
// has the same pairs in every order: not searched.
std::vector<int> Coordinator::order_avoiding(const std::vector<int>& halves) const {
  return order_avoiding(halves, membership_.current().members());
}

// (`share`: the members are about to share the model with a joiner, as below.)
std::vector<int> Coordinator::order_avoiding(const std::vector<int>& halves, const std::vector<int>& members, bool share,
                                             bool exhaustive) const {
  const std::optional<PairSearch> search = pair_search(halves, members, share || sharing_model(members), exhaustive);
  if (!search) return {};
  return cheaper_order(collsim::order_avoiding(members, search->pairs, search->search),
                       collsim::order_by_reversals(members, search->pairs, search->search));
}

// Of two orders that avoid the same halves (either may be empty: none found), the one the
// contention model prices faster on the platform as built (where their pairs share links),
// the first on a tie. A swap puts a member among others, and its new pairs may share a link
// with theirs; a reversal moves whole segments (the ring of 128 on dragonfly:4:4:8 around a
// slow local link: 9.06 ms rounds in the swaps' order, 5.7 ms in the reversals').
std::vector<int> Coordinator::cheaper_order(std::vector<int> first, std::vector<int> second) const {
  if (second.empty()) return first;
  if (first.empty()) return second;
  auto priced = [&](const std::vector<int>& order) { return model_time(*run_.algorithm, run_.model_for(order)); };
  return priced(second) < priced(first) * (1 - 1e-9) ? second : first;
}

// Whether a member of `members` still waits for the model (it joined, and the share has
// not reached it): the group's next rounds begin with the share.
bool Coordinator::sharing_model(const std::vector<int>& members) const {
  return std::any_of(members.begin(), members.end(), [&](int world) { return membership_.awaiting_model(world); });
}

// Whether the algorithm's pairs depend on the members' locality groups, not on their
// places alone: the hierarchical allreduce (member i of each group pairs with member i of
// the next group), NCCL's rings and trees (built over the nodes, each channel entering a
// node at another GPU), and channels turned inside the groups. Their `partners` are a
// stand-in for the model's alpha and B (the hierarchical's: a ring and the root with
// everyone, which no order keeps off a switch link), not the pairs an order puts on links.
bool Coordinator::pairs_follow_groups() const {
  const Uses& uses = run_.algorithm->uses;
  return uses.groups || uses.nccl || (uses.channels && run_.model.channels > 1);
}

// The pairs (by group rank, each once, the lower first) that the algorithm's schedule for
// the group `members` sends between; nullopt when the schedule is too large to read.
std::optional<RankPairs> Coordinator::scheduled_pairs(const std::vector<int>& members) const {
  const int p = static_cast<int>(members.size());
  std::set<std::pair<int, int>> seen;
  try {
    const FlowBudget budget(max_scheduled_flows);
    const Schedule schedule = run_.algorithm->schedule(run_.model_for(members));
    for (const Step& step : schedule.steps())
      for (const Flow& flow : step.flows)
        if (flow.src != flow.dst && flow.src < p && flow.dst < p)  // switch actors have no place
          seen.emplace(std::min(flow.src, flow.dst), std::max(flow.src, flow.dst));
  } catch (const ScheduleTooLarge&) {
    return std::nullopt;
  }
  return RankPairs(seen.begin(), seen.end());
}

// `share`: the group's first rounds share the model with a joiner (a binomial broadcast
// from the first member that has it, sim/worker.cpp share_model): its pairs are sought
// too, from group rank 0 and from 1 (where the joiner took place 0). A double binary tree
// on torus:4x4x4 with rank 20's link down kept its own pairs off the link when rank 10
// rejoined, but the share's transfer from 23 to 25 crossed it, and the run stopped.
// `exhaustive`: the place-by-place search for slow halves too (regroup_avoiding).
std::optional<Coordinator::PairSearch> Coordinator::pair_search(const std::vector<int>& halves,
                                                               const std::vector<int>& members, bool share,
                                                               bool exhaustive) const {
  const int p = static_cast<int>(members.size());
  return pair_search(halves, p, share, exhaustive, &members);
}

std::optional<Coordinator::PairSearch> Coordinator::pair_search(const std::vector<int>& halves, int p, bool share,
                                                               bool exhaustive, const std::vector<int>* members) const {
  if (halves.empty() || run_.scenario->collective.kind != Collective::allreduce || run_.zero3 ||
      run_.algorithm == nullptr)
    return std::nullopt;
  PairSearch found;
  if (members != nullptr && pairs_follow_groups()) {
    // the pairs of this order, from the algorithm's own schedule; members trade places
    // only inside their group, so that the pairs stay these (OrderSearch::classes)
    std::optional<RankPairs> pairs = scheduled_pairs(*members);
    if (!pairs) return std::nullopt;
    found.pairs = std::move(*pairs);
    for (int world : *members)
      if (!run_.rank_localities.empty()) found.search.classes.push_back(run_.rank_localities[static_cast<size_t>(world)]);
    const std::vector<int>& classes = found.search.classes;
    if (!classes.empty() && std::all_of(classes.begin(), classes.end(), [&](int id) { return id == classes.front(); }))
      found.search.classes.clear();  // one group: any member anywhere
  } else {
    found.pairs = run_.algorithm->partners(p, root_in_group(run_.scenario->collective.root, p),
                                           servers_in_group(run_.model.servers, p));
  }
  if (found.pairs.size() > 16 * static_cast<size_t>(p)) return std::nullopt;
  // A share across a slow half is only slower: only the halves down bind it.
  const Network& routes = run_.network();
  const bool any_down = std::any_of(halves.begin(), halves.end(), [&](int id) { return !engine_.link_up(id); });
  if (share && any_down && run_.scenario->training.has_model())
    for (int root : {0, 1}) {
      const RankPairs broadcast = binomial_partners(p, std::min(root, p - 1), 0);
      found.pairs.insert(found.pairs.end(), broadcast.begin(), broadcast.end());
    }
  found.search.last_resort = any_down || exhaustive;
  // read without keeping: a new order's routes are mostly new ones
  auto route = std::make_shared<std::vector<int>>();
  found.search.crosses = [&routes, &halves, route](int a, int b) {
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      routes.read_links(from, to, *route);
      for (int id : *route)
        if (std::find(halves.begin(), halves.end(), id) != halves.end()) return true;
    }
    return false;
  };
  found.search.cost = [&routes, route](int a, int b) {
    routes.read_links(a, b, *route);
    return static_cast<int>(route->size());
  };
  return found;
}

// A group that a drop or a join changes keeps off the link halves that the group's
// order avoided: its pairs change around the member that leaves or joins (a ring's two
// neighbours of a dropped rank become neighbours), and met again, a half already sought
// is not sought a second time (regroup_avoiding). So its members are searched again,
// from `members`; `members` when they avoid the halves already or no order does.
std::vector<int> Coordinator::keeping_off_slow_links(std::vector<int> members, bool share) const {
  const std::vector<int> halves = halves_kept_off();
  if (halves.empty()) return members;
  std::vector<int> order = order_avoiding(halves, members, share);
  return order.empty() ? members : order;
}

// The link halves a changed group keeps off: those its order avoided, and every half down
// now (read by the route cache so far). A drop or a join changes the pairs, and a pair
// across a link that is down cannot finish: recursive doubling on torus:4x4x4 with rank
// 35's NIC down for good needed no new order once 35 was dropped, but rank 10, back
// after a preemption, brought pairs across 35's link from 19, and the run stopped.
std::vector<int> Coordinator::halves_kept_off() const {
  std::vector<int> halves = avoided_halves_;
  if (!links_may_go_down_) return halves;
  const Network& routes = run_.network();
  for (size_t id = 0; id < routes.link_count(); ++id)
    if (!engine_.link_up(static_cast<int>(id)) &&
        std::find(halves.begin(), halves.end(), static_cast<int>(id)) == halves.end())
      halves.push_back(static_cast<int>(id));
  return halves;
}

// What halves_kept_off() holds, in words.
std::string Coordinator::links_kept_off() const {
  const std::vector<int> halves = halves_kept_off();
  auto is_down = [&](int id) { return !engine_.link_up(id); };
  const bool down = std::any_of(halves.begin(), halves.end(), is_down);
  const bool slow = std::any_of(halves.begin(), halves.end(), [&](int id) { return !is_down(id); });
  if (slow && down) return "the slow links avoided before and the links down";
  return down ? "the links down" : "the slow links avoided before";
}

std::optional<Coordinator::OnTime> Coordinator::on_time_avoiding(int world, const std::vector<int>& partners,
                                                                 const std::vector<std::string_view>& links, double since) const {
  const Network& routes = run_.network();
  const double full_pace = run_.scenario->recovery.straggler_threshold;
  auto clear = [&](int peer, const RankActivity& record) {
    if (peer < 0 || peer == world || record.on_time_at <= since || record.on_time_pace < full_pace) return false;
    if (std::find(partners.begin(), partners.end(), peer) != partners.end()) return false;
    for (std::string_view link : links)
      if (route_crosses(routes, world, peer, link)) return false;
    return std::any_of(partners.begin(), partners.end(), [&](int partner) { return clears_port(world, partner, peer); });
  };
  const RankActivity& own = detector_.activity(world);
  if (clear(own.on_time_peer, own)) return OnTime{own.on_time_peer, own.on_time_at, own.on_time_pace};
  for (int member : membership_.current().members()) {
    const RankActivity& rank = detector_.activity(member);
    if (rank.on_time_peer == world && clear(member, rank)) return OnTime{member, rank.on_time_at, rank.on_time_pace};
  }
  return std::nullopt;
}

}  // namespace collsim::coordination
