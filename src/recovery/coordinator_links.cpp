// The coordinator's heartbeats and links down: who is cut off, whose own link broke a transfer.
#include "recovery/coordinator_impl.hpp"

namespace collsim::coordination {

// `down`: the links down under the broken transfers (links_down_under).
bool Coordinator::around_links_down(Judgement& judgement, const std::vector<LinkRef>& down) {
  if (down.empty()) return true;  // the suspect, as before
  if (regroup_around_down_links(judgement)) {
    judgement.roots.clear();
    return true;
  }
  std::vector<std::string> names;
  for (LinkRef link : down) names.emplace_back(engine_.link_name(link));
  if (await_links(down)) {
    judgement = judge(true);  // back: the same group redoes the collective (rule 1c)
    return !judgement.roots.empty() || judgement.redo;
  }
  judgement.roots.clear();
  judgement.rule = "transfers broke on a link down that no order keeps off";
  stop_run(judgement, membership_.current().members(),
           fmt::format("transfers broke on {} {}, down between members that both answer, and no order of the "
                       "algorithm's pairs keeps off {} (a fault on a link that others' routes cross: no rank to "
                       "drop is right, SimGrid's routes are static); it stayed down for {:.9g} s",
                       names.size() > 1 ? "links" : "link", fmt::join(names, ", "), names.size() > 1 ? "them" : "it",
                       link_patience()));
  return false;
}

// The links down on the routes of the broken transfers, in the order met.
std::vector<LinkRef> Coordinator::links_down_under(const std::vector<std::pair<int, int>>& broken) const {
  std::vector<LinkRef> down;
  for (auto [a, b] : broken)
    for (LinkRef link : links_between({a, b}))
      if (std::find(down.begin(), down.end(), link) == down.end()) down.push_back(link);
  return down;
}

// A member whose worker no longer runs is gone, whatever its host: one cut off from its
// verdict has left the run on its own; one whose host came back before anyone noticed is
// a new worker asking to rejoin (the member it was is gone).
bool Coordinator::still_runs(int world) const {
  const WorkerFate fate = engine_.fate(world);
  if (fate == WorkerFate::dropped || fate == WorkerFate::aborted) return false;
  return fate != WorkerFate::rejoining || admitted(world);
}

// A worker whose host came back, admitted to the group (it has yet to read the answer).
bool Coordinator::admitted(int world) const {
  const CommGroup& group = membership_.current();
  return engine_.fate(world) == WorkerFate::rejoining &&
         membership_.awaiting_model(world) &&
         std::find(group.members().begin(), group.members().end(), world) != group.members().end();
}

// Heartbeats (rule 1): a member is cut off when its worker no longer runs, its host is
// down, or a link between it and the control host is down. Links down on the way to more
// members than they leave on the coordinator's side are the coordinator's own lost
// contact (the control host's link, or its node's NIC), nobody else's fault: the members
// cut off from the group are then those on the coordinator's side whose routes to the
// others cross them (on star:P rank 0; on nodes:N:G rank 0's node; on rail:N:G, where every
// GPU has a NIC of its own, rank 0 alone). The links are counted together, as the fault's
// record counts them (faults.cpp, cut_off_by): a torus rank's NIC down is a way out and a
// way in, each on the routes to half the group; counted apart, neither was the
// coordinator's, and the 48 members behind the two together were dropped as cut off while
// the fault's record named the coordinator's side (torus:4x4x4, rank 0's NIC, the
// coordinator on rank 0's host).
std::set<int> Coordinator::cut_off(const CommGroup& group, Judgement& out) {
  std::set<int> dead;
  std::vector<int> far;                       // live members behind a link down
  std::vector<LinkRef> links_down;   // those links, in the order met (deterministic)
  for (int world : group.members()) {
    if (!still_runs(world) || !engine_.host_up(world)) {
      dead.insert(world);
      continue;
    }
    if (run_.on_control_host(world) || !links_may_go_down_) continue;
    const std::vector<LinkRef> down = down_links(world);
    if (down.empty()) continue;
    far.push_back(world);
    for (LinkRef link : down)
      if (std::find(links_down.begin(), links_down.end(), link) == links_down.end()) links_down.push_back(link);
  }
  own_links_.clear();
  own_links_switch_ = false;
  // A member a courier reaches (another member both ways, itself in touch) takes part:
  // its transfers across the link break and the group regroups around it (rule 1d). So
  // too behind a switch link (none of the control host's own) that most members' routes
  // from the coordinator cross, when a courier reaches every one of them: on dgx-h100:16
  // the coordinator's rail's uplink down parts GPU 0 of node 0 from the 112 GPUs of the
  // other rails, which node 0's other GPUs reach; it once read as the coordinator's GPU's
  // own lost contact, and its entry called that GPU's healthy NIC slow.
  const bool couriers = std::all_of(far.begin(), far.end(), [&](int world) { return engine_.courier_available(world); });
  const bool switch_links = !control_hosts_own(links_down, far);
  if (2 * far.size() <= group.members().size() || (switch_links && couriers)) {
    for (int world : far)
      if (!engine_.courier_available(world)) dead.insert(world);
    return dead;
  }
  own_links_ = links_down;
  own_links_switch_ = switch_links;
  std::set<int> cut_from_group;
  for (int world : group.members()) {
    if (std::find(far.begin(), far.end(), world) != far.end()) continue;
    if (std::any_of(links_down.begin(), links_down.end(), [&](LinkRef link) { return crosses(world, far.front(), link); }))
      cut_from_group.insert(world);
  }
  if (own_links_.empty()) return dead;
  out.coordinator_cut = true;
  std::vector<std::string> names;
  for (LinkRef link : own_links_) names.emplace_back(engine_.link_name(link));
  out.evidence.push_back(fmt::format("links down on the control host {}'s way to {} of the {} members ({}{}): the "
                                     "coordinator has lost contact with the group",
                                     run_.control_host, far.size(), group.members().size(),
                                     fmt::join(names, ", "), own_links_switch_ ? ", switch links that no rank owns" : ""));
  dead.insert(cut_from_group.begin(), cut_from_group.end());
  return dead;
}

// Whether one of `links` is the control host's own: the first link of its route out to a
// member of `far`, or the last of one in (its NIC, a torus host's links), rather than a
// switch link further on, which couriers may go around.
bool Coordinator::control_hosts_own(const std::vector<LinkRef>& links, const std::vector<int>& far) const {
  if (run_.control_rank < 0) return true;  // (the control host runs no worker: no route of its is cached)
  const Network& routes = run_.network();
  auto down = [&](int id) { return std::find(links.begin(), links.end(), engine_.link(id)) != links.end(); };
  for (int world : far) {
    const std::vector<int>& out = routes.route(run_.control_rank, world).links;
    const std::vector<int>& in = routes.route(world, run_.control_rank).links;
    if ((!out.empty() && down(out.front())) || (!in.empty() && down(in.back()))) return true;
  }
  return false;
}

// `end`'s own links on its routes with `other`: the first link out and the last link in
// (route cache ids; -1 for an empty route).
std::array<int, 2> Coordinator::end_links(int end, int other) const {
  return collsim::end_links(run_.network(), end, other);
}

// Whether `end`'s transfers with `a` and with `b` leave or enter it by a link in common:
// always where a host has one link; not for a GPU's NVLink and NIC on rail:N:G, where an
// on-time transfer over NVLink says nothing of the NIC.
bool Coordinator::same_port(int end, int a, int b) const {
  const std::array<int, 2> with_a = end_links(end, a), with_b = end_links(end, b);
  for (int x : with_a)
    for (int y : with_b)
      if (x >= 0 && y >= 0 && physical(x) == physical(y)) return true;
  return false;
}

// Whether `end`'s on-time transfer with `on_time` clears the port its slow transfer with
// `slow` used: the same port, on a route no narrower (a device link of nodes:8:8 at 25% is
// still twice a node's NIC: a transfer across the NIC is on time through it, and cleared
// the slow rank; its healthy partner was named instead: Rabenseifner kept rank 8 for 9).
bool Coordinator::clears_port(int end, int slow, int on_time) const {
  return same_port(end, slow, on_time) && narrowest(end, on_time) >= narrowest(end, slow);
}

// Whether `end`'s on-time transfer with `peer` (`received`: into `end`) crossed `end`'s
// own link the way its late data with `other` did (`late_in`: into `end`, `late_out`: out
// of it), where that matters: on a link between two ranks' hosts (a torus), whose
// directions a fault can slow apart (a torus rank's NIC at 1% slows the half out to one
// neighbour and the half in from another: recursive doubling's 1 sent to 48 on time out
// by the healthy half of the link that 32's late data came in by, and 32 was dropped,
// healthy). A link to a switch (a NIC on every other family) clears `end` either way.
bool Coordinator::same_way(int end, int other, int peer, bool received, bool late_in, bool late_out) const {
  const int used = end_links(end, peer)[received ? 1 : 0];
  if (used < 0 || !between_ranks(end, used)) return true;
  const std::array<int, 2> late = end_links(end, other);
  return received ? late_in && used == late[1] : late_out && used == late[0];
}

// Whether the physical link of `end`'s own link half `id` is another member's own link
// too (the two ends of a torus link are ranks).
bool Coordinator::between_ranks(int end, int id) const {
  for (int member : membership_.current().members()) {
    if (member == end) continue;
    for (int theirs : end_links(member, end))
      if (theirs >= 0 && physical(theirs) == physical(id)) return true;
  }
  return false;
}

// `end`'s own link on its route to and from `other`, when it is down and is not also the
// own link of `other` or of a member already dead or cut off (a torus link between
// neighbours is both ends': either explains it down); nullptr otherwise. A link that is
// also the own link of a rank that has left the group, or a link between `end` and
// another host (the way out of one and the way in of the other: a torus's), is `end`'s
// only when another of `end`'s own links is down too: a NIC fault takes down a way out of
// its rank and a way in (as rule 5c reads a slow NIC).
// - Rank 20's NIC on torus:4x4x4 is its link to 21 and the link in from 4: once 20 was
//   dropped (cut off), 21 was dropped too, healthy, for a transfer broken on the link
//   from 20; rank 1's NIC, its link to 2 and one in, is still rank 1's once 2 is cut off.
// - The link from 2 to 3 on torus:4x2, down alone, broke the transfer from 1 to 3, and 3
//   was dropped, healthy (binary tree, Rabenseifner, direct).
LinkRef Coordinator::own_link_down(int end, int other, const std::set<int>& dead) const {
  const std::array<int, 2> mine = end_links(end, other);
  if (mine[0] < 0 || mine[1] < 0) return LinkRef{};
  const int world_size = run_.world_size();
  std::vector<char> member(static_cast<size_t>(world_size), 0);
  for (int world : membership_.current().members()) member[static_cast<size_t>(world)] = 1;
  auto shares = [&](int them, int id) {
    for (int theirs : end_links(them, end))
      if (theirs >= 0 && physical(theirs) == physical(id)) return true;
    return false;
  };
  // `id` is end's way out (`out`) or in; a rank that has it the other way is the host at
  // the link's other end.
  auto second_owner = [&](int id, bool out) {
    for (int world = 0; world < world_size; ++world) {
      if (world == end) continue;
      if (!member[static_cast<size_t>(world)] && shares(world, id)) return true;
      if (end_links(world, end)[out ? 1 : 0] == id) return true;
    }
    return false;
  };
  auto also_theirs = [&](int id, bool out) {
    if (shares(other, id) || std::any_of(dead.begin(), dead.end(), [&](int them) { return shares(them, id); }))
      return true;
    return second_owner(id, out) && !other_own_link_down(end, id);
  };
  for (int i : {0, 1})
    if (!engine_.link_up(mine[i]) && !also_theirs(mine[i], i == 0)) return engine_.link(mine[i]);
  return LinkRef{};
}

// Whether one of `end`'s own links (to or from any rank), other than the physical link
// of `id`, is down.
bool Coordinator::other_own_link_down(int end, int id) const {
  for (int world = 0; world < run_.world_size(); ++world) {
    if (world == end) continue;
    for (int half : end_links(end, world))
      if (half >= 0 && physical(half) != physical(id) && !engine_.link_up(half)) return true;
  }
  return false;
}

// Whether every link between `a` and `b`, both ways, is up.
bool Coordinator::route_up(int a, int b) const {
  const Network& routes = run_.network();
  for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}})
    for (int id : routes.route(from, to).links)
      if (!engine_.link_up(id)) return false;
  return true;
}

// The links down on the routes between `candidates`, in the order met.
std::vector<LinkRef> Coordinator::links_between(const std::vector<int>& candidates) const {
  const Network& routes = run_.network();
  std::vector<LinkRef> down;
  for (int a : candidates)
    for (int b : candidates) {
      if (a == b) continue;
      for (int id : routes.route(a, b).links)
        if (LinkRef link = engine_.link(id); !engine_.link_up(link) && std::find(down.begin(), down.end(), link) == down.end())
          down.push_back(link);
    }
  return down;
}

// For a stop between candidates: the links down on the routes between them, which cut
// them apart while neither is at fault (on a torus, a link that carries other ranks'
// routes; SimGrid's routes are static). Empty when there is none.
std::string Coordinator::links_down_between(const std::vector<int>& candidates) const {
  std::vector<std::string> down;
  for (LinkRef link : links_between(candidates)) down.emplace_back(engine_.link_name(link));
  if (down.empty()) return "";
  return fmt::format(": the route between them crosses {} {}, which is down (a fault on a link that others' routes "
                     "cross: no rank to drop is right, SimGrid's routes are static)",
                     down.size() > 1 ? "links" : "link", fmt::join(down, ", "));
}

// Whether the route between two members crosses `link`, either way.
bool Coordinator::crosses(int a, int b, LinkRef link) const {
  const Network& routes = run_.network();
  for (const NetworkRoute* route : {&routes.route(a, b), &routes.route(b, a)})
    for (int id : route->links)
      if (engine_.link(id) == link) return true;
  return false;
}

// The links down between the control host and `world`'s host, either way.
std::vector<LinkRef> Coordinator::down_links(int world) {
  std::vector<LinkRef> down;
  for (LinkRef link : heartbeat_route(world))
    if (!engine_.link_up(link) && std::find(down.begin(), down.end(), link) == down.end()) down.push_back(link);
  return down;
}

// The links between the control host and `world`'s host, both ways, read once.
const std::vector<LinkRef>& Coordinator::heartbeat_route(int world) {
  auto& [read, links] = heartbeat_routes_[static_cast<size_t>(world)];
  if (!read) links = engine_.heartbeat_route(world);
  read = true;
  return links;
}

// How long the coordinator waits for a link to come back: recovery.timeout x a round's
// nominal time (its computation and collective).
double Coordinator::link_patience() const {
  return detector_.limit(compute_seconds(run_) + healthy_model(membership_.current()));
}

// The control host's own link is down: no verdict can reach the group. The coordinator
// waits for it, checking at doubling intervals, for up to link_patience(); then the run
// stops, saying why.
bool Coordinator::await_own_link(const Judgement& judgement) {
  if (await_links(own_links_)) return true;
  stop_cut_off(judgement, membership_.current());
  return false;
}

// Waits for `links` to be up again, checking at doubling intervals, for up to
// link_patience(): whether they are (false as well when there is none to wait for).
bool Coordinator::await_links(const std::vector<LinkRef>& links) {
  if (links.empty()) return false;
  const double budget = link_patience();
  double waited = 0, step = detector_.limit(0);
  auto down = [&] { return std::any_of(links.begin(), links.end(), [&](LinkRef l) { return !engine_.link_up(l); }); };
  while (down()) {
    if (waited >= budget) return false;
    const double pause = std::min(step, budget - waited);
    engine_.sleep(pause);
    waited += pause;
    step *= 2;
  }
  return true;
}

}  // namespace collsim::coordination
