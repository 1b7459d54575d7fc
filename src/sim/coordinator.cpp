#include "sim/coordinator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "algorithms/collective.hpp"
#include "algorithms/partners.hpp"
#include "model/route_cache.hpp"
#include "model/cost_model.hpp"
#include "model/network.hpp"
#include "sim/detector.hpp"
#include "sim/link_probe.hpp"
#include "sim/order_search.hpp"
#include "sim/straggler_price.hpp"
#include "sim/link_sides.hpp"
#include "training/iteration.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

// Both ways between two ranks' hosts are up (routes from the run's route cache).
bool reachable(const RouteCache& routes, int from, int to) {
  for (auto [a, b] : {std::pair{from, to}, std::pair{to, from}})
    for (int link : routes.route(a, b).links)
      if (!routes.simgrid_link(link)->is_on()) return false;
  return true;
}

// Some platforms (a torus) have no route from a host to itself: a courier on another host
// carries the verdict to a worker that shares the coordinator's host. The courier's host
// must reach it: a verdict sent across a link that is down is lost. The rank whose host
// carries it (-1: none can).
int courier_for(const RunState& state, int world) {
  const std::vector<sg4::Host*>& hosts = state.setup.rank_hosts;
  const RouteCache& routes = routes_of(state.setup.model);
  sg4::Host* to = hosts[static_cast<size_t>(world)];
  for (int via = 0; via < static_cast<int>(hosts.size()); ++via) {
    sg4::Host* host = hosts[static_cast<size_t>(via)];
    if (host != to && host->is_on() && reachable(routes, via, world)) return via;
  }
  return -1;
}

bool on_control_host(const RunState& state, int world) {
  return state.setup.rank_hosts[static_cast<size_t>(world)] == state.setup.control_host;
}

void tell(const RunState& state, Detector& detector, int world, Verdict* message) {
  sg4::Mailbox* mailbox = detector.verdict_mailbox(world);
  const int via = on_control_host(state, world) ? courier_for(state, world) : -1;
  if (via < 0) {
    // Detached: the coordinator must not block on a worker; a dead worker never reads it.
    mailbox->put_init(message, control_message_bytes)->detach();
    return;
  }
  sg4::Actor::create("courier", state.setup.rank_hosts[static_cast<size_t>(via)], [mailbox, message] {
    mailbox->put_init(message, control_message_bytes)->detach();
  })->daemonize();
}

// The middle of `values` (the upper one of an even count); `values` is reordered.
double median_of(std::vector<double>& values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

// A probe carries at least this much (sim/link_probe.hpp): enough for a link's bandwidth,
// not only its latency, to show in its time.
constexpr double probe_min_bytes = 1 << 20;

// What the coordinator concluded from one reading of the wait-for graph.
struct Judgement {
  std::vector<int> roots;          // to drop (or keep, if keeping pays)
  std::vector<int> ambiguous;      // candidates the evidence cannot separate
  std::string rule;
  std::vector<std::string> evidence;
  // "X waits on Y since T": every waiting member's, formatted only if the judgement is
  // recorded (evidence_lines). A healthy run's checks judge often and record nothing, and
  // at p = 256 formatting them was most of the coordinator's time. Empty in `evidence` until then.
  struct WaitLine {
    size_t at;
    int world, peer;
    double since;
  };
  std::vector<WaitLine> wait_lines;
  std::vector<std::string> evidence_lines() const {
    std::vector<std::string> lines = evidence;
    for (const WaitLine& line : wait_lines)
      lines[line.at] = fmt::format("{} waits on {} since {:.9g}", line.world, line.peer, line.since);
    return lines;
  }
  double slowdown = 1;             // how much slower the roots make the group (straggler rule)
  bool certain = false;            // dead or cut off: dropped whatever it costs
  bool compute_bound = false;      // the roots are late computing, not transferring
  bool pace_measured = false;      // s a pace (whole steps, a computation, late transfers' rates): keeping may be decided
  bool coordinator_cut = false;    // the control host's own link is down: no verdict can leave it
  bool redo = false;               // nobody to drop, but the collective cannot finish: the same members redo it
  std::vector<std::string> slow_links;  // every late transfer crosses them, and they cut no rank off: nobody to drop
  std::vector<int> order;          // re-rooted: the same members in this order (group rank 0 first), nobody dropped
  std::vector<std::pair<int, int>> broken;  // (member, peer) of the transfers that broke
  std::vector<std::pair<int, double>> scores;  // the roots' progress scores, and the group's median
  double median = -1;
};

class Coordinator {
public:
  Coordinator(RunState& state, Detector& detector)
      : state_(state), detector_(detector), prices_(state, detector), heartbeat_routes_(static_cast<size_t>(state.setup.world_size())) {
    const auto on_control = std::find(state.setup.rank_hosts.begin(), state.setup.rank_hosts.end(), state.setup.control_host);
    if (on_control != state.setup.rank_hosts.end()) control_rank_ = static_cast<int>(on_control - state.setup.rank_hosts.begin());
    for (const FaultSpec& fault : state.setup.scenario->faults) links_may_go_down_ |= fault.kind == FaultKind::link_down;
    // (run never returns: the coordinator outlives every worker)
    detector_.set_resend_patience([this] { return link_patience(); });
  }

  void run() {
    // No timer of its own: a timed wait is a sleep on the control host's CPU, which would
    // disturb the computation of a worker there. The waiting workers wake it up.
    for (;;) {
      Report report;
      detector_.next_report(-1, report);
      // Even once the run stops: its verdicts (leave) must still reach the workers.
      if (report.kind == Report::Kind::undelivered) {
        resend(report.world);
        continue;
      }
      if (state_.membership.gave_up()) continue;
      if (report.kind == Report::Kind::join) {
        admit(report.world);
        continue;
      }
      if (report.kind == Report::Kind::failure) {
        if (!in_this_epoch(report)) continue;
        failures_ = true;
      }
      if (report.kind == Report::Kind::slow_pair) {
        settle_slow_pair(report.peer, report.world);
        continue;
      }
      decide();
      if (!state_.membership.gave_up()) give_up_if_stalled();
    }
  }

private:
  // A failure read after the rebuild that abandoned its epoch (the rank dropped for a link
  // down for good reports its own broken transfer with the peer that reported first) is no
  // evidence for the new one: it once made a later doubt between two members "a transfer
  // failed", and the run stopped (a double binary tree on leaf-spine:4:16, rank 29's link
  // down for good, then rank 22's NIC at 1%). A new epoch's transfers start after its
  // verdicts cross: strictly after the rebuild.
  bool in_this_epoch(const Report& report) const {
    const std::vector<int>& members = state_.membership.current().members();
    return report.since > rebuilt_at_ && std::find(members.begin(), members.end(), report.world) != members.end();
  }

  // The last resort, when the evidence names nobody: a member that has waited longer than
  // the whole training should take (its rounds at the model's pace, times the timeout
  // factor, at least 3) on a chain of waits that ends in nothing under way is in a stall
  // that no verdict will end; the run stops and says so rather than waiting for ever. A
  // chain that ends in a transfer moving bytes or a computation is slow, not stalled: it
  // ends, and the next steps bring the evidence (two ranks exchanging only with each other
  // are late together, and only their next partners tell which one is slow). A transfer
  // that has moved nothing over the stall limit is stalled (SimGrid never ends one whose
  // link's latency changed during its first alpha).
  void give_up_if_stalled() {
    const CommGroup& group = state_.membership.current();
    if (stall_limit_ < 0) {
      const double whole = state_.setup.scenario->training.rounds * (compute_seconds(state_) + healthy_model(group));
      stall_limit_ = std::max(detector_.limit(whole), 3 * whole);
    }
    const double now = sg4::Engine::get_clock();
    for (int world : group.members()) {
      const RankActivity& rank = detector_.activity(world);
      const bool stuck = rank.doing == RankActivity::Doing::waiting || rank.doing == RankActivity::Doing::failed;
      if (!stuck || now - rank.since <= stall_limit_ || under_way(world)) continue;
      // The trace keeps what the coordinator saw (the wait-for graph) when it stopped.
      Judgement judgement = judge();
      judgement.roots.clear();
      judgement.ambiguous.clear();
      judgement.rule = "a wait longer than the whole run, and nobody to drop";
      stop_run(judgement, group.members(),
               fmt::format("rank {} has waited on rank {} since {:.9g} s, longer than the whole run should take "
                           "({:.9g} s), and the evidence names no rank to drop",
                           world, rank.peer, rank.since, stall_limit_));
      return;
    }
  }

  // Whether `world`'s chain of waits (on peers that have not posted their side) ends in a
  // computation or a transfer under way (started within the stall limit, or moving bytes),
  // among live members.
  bool under_way(int world) const {
    const double now = sg4::Engine::get_clock();
    std::set<int> seen;
    while (seen.insert(world).second && still_runs(world)) {
      const RankActivity& rank = detector_.activity(world);
      // A member with a verdict to read reads it at its wait's deadline at the latest (a
      // wait not yet suspicious does not listen for it): those waiting on it in the next
      // epoch wait for that, not for a stall (direct on nodes:8:8, whose 1 MiB waits run
      // tens of milliseconds past the model's whole run).
      if (rank.verdict || rank.doing == RankActivity::Doing::computing) return true;
      if (rank.doing != RankActivity::Doing::waiting) return false;
      if (const double started = detector_.transfer_start(world); started >= 0)
        return now - started <= stall_limit_ || detector_.transfer_moved(world) > 0;
      world = rank.peer;
    }
    return false;
  }

  // Reads the group's waits and acts.
  void decide() {
    Judgement judgement = judge();
    if (!judgement.slow_links.empty() && judgement.order.empty()) {
      // Transfers that broke on a link down read as late ones across it: the link is down,
      // not slow, and the collective cannot finish across it (Rabenseifner on torus:4x4x4
      // with the link 21-25 down for good waited until the run's end). Rule 1d first.
      const std::vector<const sg4::Link*> down =
          failures_ ? links_down_under(judgement.broken) : std::vector<const sg4::Link*>{};
      if (down.empty()) {
        record_slow_links(judgement);
        return;
      }
      judgement.slow_links.clear();
      if (!around_links_down(judgement, down)) return;
    }
    if (judgement.roots.empty() && judgement.ambiguous.empty() && !judgement.redo) return;
    // The same pair as an earlier window of this epoch left undecided (a ring's one late
    // transfer, step after step, each over before a second look; or two pairs by turns, a
    // naive root's transfers to two ranks behind one slow link): more windows bring nothing
    // new; probes may.
    if (judgement.ambiguous.size() == 2 && undecided_before(judgement.ambiguous) && !failures_)
      settle_by_probes(judgement);
    if (!judgement.ambiguous.empty()) {
      // Two candidates the evidence cannot separate: nobody is dropped; a second window
      // (the longest deadline involved) brings more evidence.
      const double second_window = std::max(window_, detector_.limit(0));
      record_undecided(judgement, second_window);
      sg4::this_actor::sleep_for(second_window);
      judgement = judge(true);
      if (judgement.roots.empty() && !judgement.redo) {
        if (!judgement.ambiguous.empty()) record_undecided(judgement, std::max(window_, detector_.limit(0)));
        if (!failures_ || judgement.ambiguous.empty()) return;
        // A transfer broke between candidates that both answer, on a link down between them
        // (a link that others' routes cross, where no rank to drop is right): the same
        // members regroup in an order whose pairs cross no link that is down (rule 1d).
        // When no order does, the coordinator waits for the link as for its own, and if it
        // comes back the same group redoes the collective (rule 1c); otherwise the run
        // stops, saying which link.
        std::string down = links_down_between(judgement.ambiguous);
        if (!down.empty() && regroup_around_down_links(judgement)) {
          // rebuilt below, in the new order
        } else if (await_links(links_between(judgement.ambiguous))) {
          judgement = judge(true);
        } else if (!down.empty()) {
          down += fmt::format("; it stayed down for {:.9g} s", link_patience());
        }
        if (judgement.roots.empty() && !judgement.redo) {  // (a rank may have died meanwhile: dropped below)
          stop_run(judgement, state_.membership.current().members(),
                   fmt::format("a transfer failed and the evidence cannot tell between ranks {}{}",
                               fmt::join(judgement.ambiguous, ", "), down));
          return;
        }
      }
    }
    // Transfers broke, perhaps on a link down, and the evidence only suspects a member.
    if (!judgement.certain && failures_ && !judgement.roots.empty() && !judgement.broken.empty() &&
        !around_links_down(judgement))
      return;
    if (!judgement.certain && !dropping_pays(judgement)) return;
    if (judgement.coordinator_cut && !await_own_link(judgement)) return;
    rebuild(judgement);
  }

  // Transfers broke, and the member they all involve is a suspect, not a certainty: one
  // link down between members breaks several at once (a tree rank that lost one transfer
  // abandons its others). The double binary tree on torus:4x2 with the link 2-3 down lost
  // 1-2, 2-3 and 3-2; 2 was named, dropping it did not pay, and the group waited until the
  // run's end. So when the broken transfers' routes cross a link down, rule 1d first: the
  // same members regroup in an order that keeps off it. When none does (direct), the link
  // is awaited as rule 1d awaits it, and the run stops if it stays down (direct on
  // torus:4x2 with the link 1-5 down waited until the run's end, "the evidence names no
  // rank to drop"). False when the run stopped or there is nothing to act on.
  bool around_links_down(Judgement& judgement) { return around_links_down(judgement, links_down_under(judgement.broken)); }

  // `down`: the links down under the broken transfers (links_down_under).
  bool around_links_down(Judgement& judgement, const std::vector<const sg4::Link*>& down) {
    if (down.empty()) return true;  // the suspect, as before
    if (regroup_around_down_links(judgement)) {
      judgement.roots.clear();
      return true;
    }
    std::vector<std::string> names;
    for (const sg4::Link* link : down) names.emplace_back(link->get_name());
    if (await_links(down)) {
      judgement = judge(true);  // back: the same group redoes the collective (rule 1c)
      return !judgement.roots.empty() || judgement.redo;
    }
    judgement.roots.clear();
    judgement.rule = "transfers broke on a link down that no order keeps off";
    stop_run(judgement, state_.membership.current().members(),
             fmt::format("transfers broke on {} {}, down between members that both answer, and no order of the "
                         "algorithm's pairs keeps off {} (a fault on a link that others' routes cross: no rank to "
                         "drop is right, SimGrid's routes are static); it stayed down for {:.9g} s",
                         names.size() > 1 ? "links" : "link", fmt::join(names, ", "), names.size() > 1 ? "them" : "it",
                         link_patience()));
    return false;
  }

  // The links down on the routes of the broken transfers, in the order met.
  std::vector<const sg4::Link*> links_down_under(const std::vector<std::pair<int, int>>& broken) const {
    std::vector<const sg4::Link*> down;
    for (auto [a, b] : broken)
      for (const sg4::Link* link : links_between({a, b}))
        if (std::find(down.begin(), down.end(), link) == down.end()) down.push_back(link);
    return down;
  }

  // A member whose worker no longer runs is gone, whatever its host: one cut off from its
  // verdict has left the run on its own; one whose host came back before anyone noticed is
  // a new worker asking to rejoin (the member it was is gone).
  bool still_runs(int world) const {
    const WorkerFate fate = state_.workers[static_cast<size_t>(world)].fate;
    if (fate == WorkerFate::dropped || fate == WorkerFate::aborted) return false;
    return fate != WorkerFate::rejoining || admitted(world);
  }

  // A worker whose host came back, admitted to the group (it has yet to read the answer).
  bool admitted(int world) const {
    const CommGroup& group = state_.membership.current();
    return state_.workers[static_cast<size_t>(world)].fate == WorkerFate::rejoining &&
           state_.membership.awaiting_model(world) &&
           std::find(group.members().begin(), group.members().end(), world) != group.members().end();
  }

  // Heartbeats (rule 1): a member is cut off when its worker no longer runs, its host is
  // down, or a link between it and the control host is down. A link down on the way to
  // more members than it leaves on the coordinator's side is the coordinator's own lost
  // contact (the control host's link, or its node's NIC), nobody else's fault: the members
  // cut off from the group are then those on the coordinator's side whose routes to the
  // others cross it (on star:P rank 0; on nodes:N:G rank 0's node; on rail:N:G, where every
  // GPU has a NIC of its own, rank 0 alone).
  std::set<int> cut_off(const CommGroup& group, Judgement& out) {
    std::set<int> dead;
    // each link down -> the members it cuts from the coordinator (in the order met: deterministic)
    std::vector<std::pair<const sg4::Link*, std::vector<int>>> far;
    for (int world : group.members()) {
      sg4::Host* host = state_.setup.rank_hosts[static_cast<size_t>(world)];
      if (!still_runs(world) || !host->is_on()) {
        dead.insert(world);
        continue;
      }
      if (host == state_.setup.control_host || !links_may_go_down_) continue;
      for (const sg4::Link* link : down_links(world)) {
        auto it = std::find_if(far.begin(), far.end(), [&](const auto& entry) { return entry.first == link; });
        if (it == far.end()) it = far.insert(far.end(), {link, {}});
        it->second.push_back(world);
      }
    }
    own_links_.clear();
    std::set<int> cut_from_group;
    for (const auto& [link, behind] : far) {
      if (2 * behind.size() <= group.members().size()) {
        dead.insert(behind.begin(), behind.end());
        continue;
      }
      own_links_.push_back(link);
      for (int world : group.members())
        if (std::find(behind.begin(), behind.end(), world) == behind.end() && crosses(world, behind.front(), link))
          cut_from_group.insert(world);
    }
    if (own_links_.empty()) return dead;
    out.coordinator_cut = true;
    std::vector<std::string> names;
    for (const sg4::Link* link : own_links_) names.emplace_back(link->get_name());
    out.evidence.push_back(fmt::format("the control host {}'s own link {} is down: the coordinator reaches no other host",
                                       state_.setup.control_host->get_name(), fmt::join(names, ", ")));
    dead.insert(cut_from_group.begin(), cut_from_group.end());
    return dead;
  }

  // `end`'s own links on its routes with `other`: the first link out and the last link in
  // (route cache ids; -1 for an empty route).
  std::array<int, 2> end_links(int end, int other) const {
    return collsim::end_links(routes_of(state_.setup.model), end, other);
  }

  // A link as one physical link (both halves of a split-duplex link are one).
  std::string_view physical(int id) const { return physical_link(routes_of(state_.setup.model).link(id).name); }

  // Whether `end`'s transfers with `a` and with `b` leave or enter it by a link in common:
  // always where a host has one link; not for a GPU's NVLink and NIC on rail:N:G, where an
  // on-time transfer over NVLink says nothing of the NIC.
  bool same_port(int end, int a, int b) const {
    const std::array<int, 2> with_a = end_links(end, a), with_b = end_links(end, b);
    for (int x : with_a)
      for (int y : with_b)
        if (x >= 0 && y >= 0 && physical(x) == physical(y)) return true;
    return false;
  }

  // The narrowest link's bandwidth on the routes between a and b, either way (as built).
  double narrowest(int a, int b) const { return collsim::narrowest(*state_.setup.model.network, a, b); }

  // Whether `end`'s on-time transfer with `on_time` clears the port its slow transfer with
  // `slow` used: the same port, on a route no narrower (a device link of nodes:8:8 at 25% is
  // still twice a node's NIC: a transfer across the NIC is on time through it, and cleared
  // the slow rank; its healthy partner was named instead: Rabenseifner kept rank 8 for 9).
  bool clears_port(int end, int slow, int on_time) const {
    return same_port(end, slow, on_time) && narrowest(end, on_time) >= narrowest(end, slow);
  }

  // Whether `end`'s on-time transfer with `peer` (`received`: into `end`) crossed `end`'s
  // own link the way its late data with `other` did (`late_in`: into `end`, `late_out`: out
  // of it), where that matters: on a link between two ranks' hosts (a torus), whose
  // directions a fault can slow apart (a torus rank's NIC at 1% slows the half out to one
  // neighbour and the half in from another: recursive doubling's 1 sent to 48 on time out
  // by the healthy half of the link that 32's late data came in by, and 32 was dropped,
  // healthy). A link to a switch (a NIC on every other family) clears `end` either way.
  bool same_way(int end, int other, int peer, bool received, bool late_in, bool late_out) const {
    const int used = end_links(end, peer)[received ? 1 : 0];
    if (used < 0 || !between_ranks(end, used)) return true;
    const std::array<int, 2> late = end_links(end, other);
    return received ? late_in && used == late[1] : late_out && used == late[0];
  }

  // Whether the physical link of `end`'s own link half `id` is another member's own link
  // too (the two ends of a torus link are ranks).
  bool between_ranks(int end, int id) const {
    for (int member : state_.membership.current().members()) {
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
  const sg4::Link* own_link_down(int end, int other, const std::set<int>& dead) const {
    const RouteCache& routes = routes_of(state_.setup.model);
    const std::array<int, 2> mine = end_links(end, other);
    if (mine[0] < 0 || mine[1] < 0) return nullptr;
    const int world_size = state_.setup.world_size();
    std::vector<char> member(static_cast<size_t>(world_size), 0);
    for (int world : state_.membership.current().members()) member[static_cast<size_t>(world)] = 1;
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
      if (!routes.simgrid_link(mine[i])->is_on() && !also_theirs(mine[i], i == 0)) return routes.simgrid_link(mine[i]);
    return nullptr;
  }

  // Whether one of `end`'s own links (to or from any rank), other than the physical link
  // of `id`, is down.
  bool other_own_link_down(int end, int id) const {
    const RouteCache& routes = routes_of(state_.setup.model);
    for (int world = 0; world < state_.setup.world_size(); ++world) {
      if (world == end) continue;
      for (int half : end_links(end, world))
        if (half >= 0 && physical(half) != physical(id) && !routes.simgrid_link(half)->is_on()) return true;
    }
    return false;
  }

  // Whether every link between `a` and `b`, both ways, is up.
  bool route_up(int a, int b) const {
    const RouteCache& routes = routes_of(state_.setup.model);
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}})
      for (int id : routes.route(from, to).links)
        if (!routes.simgrid_link(id)->is_on()) return false;
    return true;
  }

  // The links down on the routes between `candidates`, in the order met.
  std::vector<const sg4::Link*> links_between(const std::vector<int>& candidates) const {
    const RouteCache& routes = routes_of(state_.setup.model);
    std::vector<const sg4::Link*> down;
    for (int a : candidates)
      for (int b : candidates) {
        if (a == b) continue;
        for (int id : routes.route(a, b).links)
          if (const sg4::Link* link = routes.simgrid_link(id);
              !link->is_on() && std::find(down.begin(), down.end(), link) == down.end())
            down.push_back(link);
      }
    return down;
  }

  // For a stop between candidates: the links down on the routes between them, which cut
  // them apart while neither is at fault (on a torus, a link that carries other ranks'
  // routes; SimGrid's routes are static). Empty when there is none.
  std::string links_down_between(const std::vector<int>& candidates) const {
    std::vector<std::string> down;
    for (const sg4::Link* link : links_between(candidates)) down.emplace_back(link->get_name());
    if (down.empty()) return "";
    return fmt::format(": the route between them crosses {} {}, which is down (a fault on a link that others' routes "
                       "cross: no rank to drop is right, SimGrid's routes are static)",
                       down.size() > 1 ? "links" : "link", fmt::join(down, ", "));
  }

  // Whether the route between two members crosses `link`, either way.
  bool crosses(int a, int b, const sg4::Link* link) const {
    const RouteCache& routes = routes_of(state_.setup.model);
    for (const NetworkRoute* route : {&routes.route(a, b), &routes.route(b, a)})
      for (int id : route->links)
        if (routes.simgrid_link(id) == link) return true;
    return false;
  }

  // The links down between the control host and `world`'s host, either way.
  std::vector<const sg4::Link*> down_links(int world) {
    std::vector<const sg4::Link*> down;
    for (const sg4::Link* link : heartbeat_route(world))
      if (!link->is_on() && std::find(down.begin(), down.end(), link) == down.end()) down.push_back(link);
    return down;
  }

  // The links between the control host and `world`'s host, both ways, read once: from the
  // run's route cache when a worker shares the control host, from SimGrid otherwise (the
  // route cache's endpoints are the workers' hosts).
  const std::vector<const sg4::Link*>& heartbeat_route(int world) {
    auto& [read, links] = heartbeat_routes_[static_cast<size_t>(world)];
    if (read) return links;
    read = true;
    if (control_rank_ >= 0) {
      const RouteCache& routes = routes_of(state_.setup.model);
      for (const NetworkRoute* route : {&routes.route(control_rank_, world), &routes.route(world, control_rank_)})
        for (int id : route->links) links.push_back(routes.simgrid_link(id));
      return links;
    }
    sg4::Host* host = state_.setup.rank_hosts[static_cast<size_t>(world)];
    for (auto [from, to] : {std::pair{state_.setup.control_host, host}, std::pair{host, state_.setup.control_host}}) {
      std::vector<sg4::Link*> route;
      double latency = 0;
      from->route_to(to, route, &latency);
      links.insert(links.end(), route.begin(), route.end());
    }
    return links;
  }

  // How long the coordinator waits for a link to come back: recovery.timeout x a round's
  // nominal time (its computation and collective).
  double link_patience() const {
    return detector_.limit(compute_seconds(state_) + healthy_model(state_.membership.current()));
  }

  // The control host's own link is down: no verdict can reach the group. The coordinator
  // waits for it, checking at doubling intervals, for up to link_patience(); then the run
  // stops, saying why.
  bool await_own_link(const Judgement& judgement) {
    if (await_links(own_links_)) return true;
    stop_cut_off(judgement, state_.membership.current());
    return false;
  }

  // Waits for `links` to be up again, checking at doubling intervals, for up to
  // link_patience(): whether they are (false as well when there is none to wait for).
  bool await_links(const std::vector<const sg4::Link*>& links) {
    if (links.empty()) return false;
    const double budget = link_patience();
    double waited = 0, step = detector_.limit(0);
    auto down = [&] { return std::any_of(links.begin(), links.end(), [](const sg4::Link* l) { return !l->is_on(); }); };
    while (down()) {
      if (waited >= budget) return false;
      const double pause = std::min(step, budget - waited);
      sg4::this_actor::sleep_for(pause);
      waited += pause;
      step *= 2;
    }
    return true;
  }

  // The control host's own link (own_links_) stayed down past link_patience(): the run
  // stops, saying why (and whom it would have dropped: the ranks it cuts off with the
  // coordinator; none behind an idle control host's link).
  void stop_cut_off(const Judgement& judgement, const CommGroup& group) {
    std::vector<std::string> names;
    for (const sg4::Link* link : own_links_) names.emplace_back(link->get_name());
    const std::string host = state_.setup.control_host->get_name();
    if (judgement.roots.empty()) {
      stop_run(judgement, group.members(),
               fmt::format("the coordinator's host {} lost its link {}: no verdict can reach the group", host,
                           fmt::join(names, ", ")));
      return;
    }
    const bool on_its_host = std::all_of(judgement.roots.begin(), judgement.roots.end(),
                                         [&](int world) { return on_control_host(state_, world); });
    const bool several = judgement.roots.size() > 1;
    stop_run(judgement, members_without(group.members(), judgement.roots),
             fmt::format("the coordinator's host {} lost its link {} ({} rank{} {}): no verdict can reach the group "
                         "to drop {}",
                         host, fmt::join(names, ", "), on_its_host ? "it shares the host with" : "cutting off with it",
                         several ? "s" : "", fmt::join(judgement.roots, ", "), several ? "them" : "it"));
  }

  // A resender gave up: no verdict reached `world` within link_patience(). When the control
  // host's own link is the one down (the coordinator reaches no member), the coordinator
  // has lost contact with the whole group for longer than it waits for its link: the run
  // stops, as in await_own_link. Otherwise only the worker's way is down: it is cut off.
  void lost_contact() {
    if (state_.membership.gave_up()) return;
    const Judgement judgement = judge();
    if (judgement.coordinator_cut) stop_cut_off(judgement, state_.membership.current());
  }

  // The run stops (a rebuild below recovery.min_workers, the coordinator cut off, a failure
  // the evidence cannot attribute, a stall past the whole run): the trace says why and who
  // was left (`left`); everyone is told to leave.
  void stop_run(const Judgement& judgement, const std::vector<int>& left, std::string reason) {
    const CommGroup& group = state_.membership.current();
    state_.membership.give_up(std::move(reason));
    RecoveryEvent event = event_for(group, judgement);
    event.epoch_after = group.epoch();
    event.round = lowest_round(group, judgement.roots);
    event.group = left;
    event.undecided_ranks = judgement.ambiguous;
    event.stopped = true;
    event.reason = "stopped: " + state_.membership.abort_reason();
    state_.record.recoveries.push_back(event);
    release_everyone();
  }

  // The ranks that every late transfer involves; of two (the ends of the late transfers,
  // all between the same pair), one that completed a transfer on time with someone else
  // after the first of them should have ended (its start plus its expected time) is
  // cleared: its own link kept pace while the pair was already overdue. One that ended
  // earlier may have run before the fault (a NIC slowed mid-step: its other transfer of
  // the step ended on time just before) and clears nobody.
  std::vector<int> common_ends(const std::vector<std::pair<int, int>>& late, const std::map<int, std::set<int>>& partners,
                               Judgement& out) const {
    std::vector<int> common;
    for (const auto& [world, peers] : partners) {
      const bool covers = std::all_of(late.begin(), late.end(), [&](auto edge) { return edge.first == world || edge.second == world; });
      if (covers) common.push_back(world);
    }
    if (common.size() > 1) {
      const auto first_late = late_seen_.find({std::min(common[0], common[1]), std::max(common[0], common[1])});
      const double late_start = first_late == late_seen_.end() ? -1 : first_late->second.since;
      std::vector<int> not_cleared;
      for (int world : common) {
        const RankActivity& rank = detector_.activity(world);
        const int other = world == common[0] ? common[1] : common[0];
        const bool lower = world < other;
        const bool late_in = late_start >= 0 && (lower ? first_late->second.into_lower : first_late->second.into_higher);
        const bool late_out = late_start >= 0 && (lower ? first_late->second.into_higher : first_late->second.into_lower);
        const bool cleared = rank.on_time_peer >= 0 && rank.on_time_peer != other && late_start >= 0 &&
                             rank.on_time_at > late_start && clears_port(world, other, rank.on_time_peer) &&
                             same_way(world, other, rank.on_time_peer, rank.on_time_receive, late_in, late_out);
        if (cleared) out.evidence.push_back(fmt::format("{} completed a transfer with {} on time at {:.9g}", world,
                                                        rank.on_time_peer, rank.on_time_at));
        else not_cleared.push_back(world);
      }
      common = not_cleared;
    }
    return common;
  }

  // The group's waits as evidence: the wait-for edges and the late transfers (or broken
  // ones) between live members.
  struct Waits {
    std::map<int, int> waited_on;           // member -> how many wait on it
    std::vector<std::pair<int, int>> late;  // (waiter, peer)
    std::vector<double> late_since;         // when each should have ended (or broke)
    std::vector<int> late_into;             // the end its data goes into (-1: broke, either)
    double late_began = -1;                 // when the first of the late transfers under way started
    std::vector<std::pair<int, int>> late_flows;  // (from, to): the late transfers under way, the way their data goes
    std::set<int> ports_down;               // members whose own link (not on the way to the coordinator) broke a transfer
    std::vector<std::pair<int, int>> broken;  // (member, peer) of the transfers that broke
  };

  Waits read_waits(const CommGroup& group, const std::set<int>& dead, double now, Judgement& out) {
    Waits waits;
    for (int world : group.members()) {
      if (dead.count(world)) continue;
      const RankActivity& rank = detector_.activity(world);
      if (detector_.transfer_over(world)) continue;  // about to go on: no evidence
      if (rank.doing == RankActivity::Doing::waiting) {
        const double started = detector_.transfer_start(world);
        const double expected = detector_.expected_now(world);
        const double deadline = detector_.wait_limit(world, expected);
        if (started < 0) {
          ++waits.waited_on[rank.peer];
          out.wait_lines.push_back({out.evidence.size(), world, rank.peer, rank.since});
          out.evidence.emplace_back();
        } else if (now >= started + deadline) {
          waits.late.emplace_back(world, rank.peer);
          waits.late_since.push_back(started + expected);
          waits.late_into.push_back(rank.receive ? world : rank.peer);
          waits.late_began = waits.late_began < 0 ? started : std::min(waits.late_began, started);
          waits.late_flows.push_back(rank.receive ? std::pair{rank.peer, world} : std::pair{world, rank.peer});
          late_waiters_.push_back(world);
          window_ = std::max(window_, deadline);
          out.evidence.push_back(fmt::format("{} {} {} late since {:.9g}", world,
                                             rank.receive ? "receives from" : "sends to", rank.peer, started + deadline));
        }
      } else if (rank.doing == RankActivity::Doing::failed) {
        waits.late.emplace_back(world, rank.peer);
        waits.late_since.push_back(rank.since);
        waits.late_into.push_back(-1);
        waits.broken.emplace_back(world, rank.peer);
        out.evidence.push_back(fmt::format("{} lost its transfer with {} at {:.9g}", world, rank.peer, rank.since));
        for (auto [end, other] : {std::pair{world, rank.peer}, std::pair{rank.peer, world}})
          if (const sg4::Link* port = own_link_down(end, other, dead);
              port != nullptr && !dead.count(end) && waits.ports_down.insert(end).second)
            out.evidence.push_back(fmt::format("{}'s own link {} is down", end, port->get_name()));
      }
    }
    return waits;
  }

  Judgement judge(bool second_look = false) {
    const CommGroup& group = state_.membership.current();
    const double now = sg4::Engine::get_clock();
    Judgement out;
    window_ = 0;
    late_waiters_.clear();
    const std::set<int> dead = cut_off(group, out);
    Waits waits = read_waits(group, dead, now, out);
    out.broken = waits.broken;
    const std::map<int, int>& waited_on = waits.waited_on;
    std::vector<std::pair<int, int>>& late = waits.late;
    const std::vector<double>& late_since = waits.late_since;
    const std::set<int>& ports_down = waits.ports_down;
    std::map<int, double> slowdown;  // per member, of its late transfers
    std::vector<int> busy_late;
    for (int world : group.members()) {
      const RankActivity& rank = detector_.activity(world);
      if (dead.count(world) || rank.doing != RankActivity::Doing::computing || !waited_on.count(world)) continue;
      const double deadline = detector_.compute_deadline(rank);
      if (now >= deadline) {
        busy_late.push_back(world);
        slowdown[world] = std::max(1.0, (now - rank.since) / std::max(rank.expected_compute, 1e-300));
        out.evidence.push_back(fmt::format("{} computes since {:.9g}, past its deadline {:.9g}", world, rank.since, deadline));
      }
    }

    // 1. Dead or cut off: certain.
    if (!dead.empty()) {
      std::set<int> roots = dead;
      roots.insert(ports_down.begin(), ports_down.end());
      out.roots.assign(roots.begin(), roots.end());
      out.rule = out.coordinator_cut ? "its host's link is down, and the coordinator shares its host"
                                     : "dead or cut off from the coordinator";
      out.certain = true;
      for (int world : dead) out.evidence.push_back(fmt::format("{} does not answer heartbeats", world));
      return out;
    }
    // 1b. A transfer broke on a member's own link (a GPU's NIC on rail:N:G, whose NVLink
    //     still reaches the coordinator): the host's own monitor sees the link down. Certain.
    if (!ports_down.empty()) {
      out.roots.assign(ports_down.begin(), ports_down.end());
      out.rule = "a transfer broke on its own link, which is down";
      out.certain = true;
      return out;
    }
    // 1c. Transfers that broke on a link that has come back since (a link-down with a
    //     duration): a worker learns that its transfer broke when it waits on it, which may
    //     be long after. Both ends answer and every route between them is up: nobody is to
    //     blame, but the collective cannot finish (the broken transfers are gone, and their
    //     ends' peers abandon theirs in turn). The same members redo it.
    if (!waits.broken.empty() && std::all_of(waits.broken.begin(), waits.broken.end(), [&](auto pair) {
          return still_runs(pair.second) && route_up(pair.first, pair.second);  // (none is dead: rule 1)
        })) {
      out.redo = out.certain = true;
      out.rule = "transfers broke on a link that is up again, and every member answers: the same group redoes the collective";
      return out;
    }
    // 2. Busy computing past its deadline while others wait on it: a straggler.
    if (!busy_late.empty()) {
      out.roots = busy_late;
      out.rule = "others wait on it and it computes past its deadline (a straggler)";
      out.compute_bound = out.pace_measured = true;
      for (int world : busy_late) out.slowdown = std::max(out.slowdown, slowdown[world]);
      return out;
    }
    // 3. A progress score below the threshold for the window: a straggler.
    if (judge_progress(group.members(), out)) return out;
    // 4. Late or broken transfers: the rank common to all of them. With one late transfer
    //    only, an end that completed a transfer with someone else on time since is cleared.
    if (late.empty()) return out;
    // Late transfers seen in earlier windows of this epoch still count: a slow rank meets
    // a new partner at each step (recursive doubling), and only together do they single it out.
    // A transfer is one piece of evidence, seen late from both its ends or from one.
    for (size_t i = 0; i < late.size(); ++i) {
      const auto [a, b] = late[i];
      const auto [seen, added] = late_seen_.try_emplace({std::min(a, b), std::max(a, b)}, LateSeen{late_since[i]});
      if (!added) seen->second.since = std::min(seen->second.since, late_since[i]);
      const int into = waits.late_into[i];
      seen->second.into_lower |= into < 0 || into == std::min(a, b);
      seen->second.into_higher |= into < 0 || into == std::max(a, b);
    }
    late.clear();
    for (const auto& [pair, since] : late_seen_) late.push_back(pair);
    std::map<int, std::set<int>> partners;
    for (auto [a, b] : late) {
      partners[a].insert(b);
      partners[b].insert(a);
    }
    const std::vector<int> common = common_ends(late, partners, out);
    if (judge_link_slow_both_ways(waits, out)) return out;
    if (common.size() == 1 && late.size() == 1 && !second_look) {
      // One late transfer is thin evidence (a link shared more than the expected times
      // see): undecided until a second window shows whether it stays late.
      for (const auto& [world, peers] : partners) out.ambiguous.push_back(world);
      out.rule = "one late transfer only";
      return out;
    }
    if (common.size() == 1 && judge_transit_link(common.front(), late, waits, out)) return out;
    if (common.size() == 1) {
      out.roots = common;
      out.rule = late.size() > 1 ? "every late or broken transfer involves it"
                                 : "its one late transfer's other end made progress on time";
      add_scores(group.members(), out);
      note_median_slowdown(common.front(), out);
      return out;
    }
    if (common.empty() && judge_link(late, group.members(), waits, out)) return out;
    // Late transfers with no rank in common: two candidates are undecided; more, spread
    // over the group, are congestion (the expected times do not see every shared link).
    if (partners.size() == 2 || failures_) {
      for (const auto& [world, peers] : partners) out.ambiguous.push_back(world);
      out.rule = "the late transfers do not single out one rank";
    } else {
      late_seen_.clear();  // congestion says nothing about a culprit: start afresh
    }
    return out;
  }

  // How much slower `common`'s late transfers run (their progress so far predicts their
  // end): the median of them, not the slowest (direct with a fixed deadline shorter than
  // its transfers: all of the root's are late at x1, and the one with a slow NIC's rank at
  // x4 is that rank's, not the root's).
  // When each of them has moved bytes, their rate so far is a pace (priced on the routes, and
  // keeping may be decided): a rank that gates only its own transfers of a tree costs far
  // less than the whole collective x s (a double binary tree on nodes:8:8, rank 4's device
  // link at 25% from round 1: priced as x s, it was dropped and the 63 took 25.3 ms; kept,
  // 15.6 ms). A rate that predates the fault is too fast; the deadlines of a kept rank
  // stretch to 1.5 x it, and a slower pace is late again and judged anew.
  void note_median_slowdown(int common, Judgement& out) const {
    std::vector<double> slowdowns = note_late_slowdowns(out, common);
    if (slowdowns.empty()) return;
    out.slowdown = std::max(out.slowdown, median_of(slowdowns));
    out.pace_measured = std::all_of(late_waiters_.begin(), late_waiters_.end(), [&](int waiter) {
      const int peer = detector_.activity(waiter).peer;
      return (waiter != common && peer != common) || detector_.transfer_moved(waiter) > 0;
    });
  }

  // The evidence of each late waiter's transfer (only those involving `common` when it is a
  // rank): how much slower than expected it runs. Returns those slowdowns.
  std::vector<double> note_late_slowdowns(Judgement& out, int common = -1) const {
    std::vector<double> slowdowns;
    for (int waiter : late_waiters_) {
      const RankActivity& rank = detector_.activity(waiter);
      if (common >= 0 && waiter != common && rank.peer != common) continue;
      const double s = detector_.slowdown(waiter);
      slowdowns.push_back(s);
      out.evidence.push_back(fmt::format("{}'s transfer with {} runs x{:.3g} slower than expected", waiter, rank.peer, s));
    }
    return slowdowns;
  }

  // 4b. Late transfers with no rank in common that all cross one link (a node's NIC, each
  //     of whose ranks is late with a different partner): the roots are every member
  //     behind it, the smaller side of the cut it makes (sim/link_sides.hpp). Dropping only
  //     the ranks seen crossing it would leave the next ones (a ring's new neighbours, a
  //     node's new leader) to cross it in the rebuilt group.
  bool judge_link(const std::vector<std::pair<int, int>>& late, const std::vector<int>& members, const Waits& waits,
                  Judgement& out) {
    if (late.size() < 2) return false;
    const RouteCache& routes = routes_of(state_.setup.model);
    const std::vector<std::string_view> shared = links_crossed_by_all(late);
    // The link that cuts off the fewest members; two that cut off as many (a pair of
    // nodes exchanging across both NICs) leave the evidence undecided until more comes.
    std::vector<std::pair<std::string_view, std::vector<int>>> cuts;
    for (std::string_view link : shared)
      if (std::vector<int> side = ranks_behind(routes, members, link); !side.empty()) cuts.emplace_back(link, std::move(side));
    if (cuts.empty()) return judge_uncut_link(shared, members, waits, out);
    std::sort(cuts.begin(), cuts.end(), [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    if (cuts.size() > 1 && cuts[1].second.size() == cuts[0].second.size()) {
      std::set<int> either;
      for (const auto& [link, side] : cuts)
        if (side.size() == cuts[0].second.size()) either.insert(side.begin(), side.end());
      out.ambiguous.assign(either.begin(), either.end());
      out.rule = fmt::format("every late transfer crosses both links {} and {}, each the only way to as many ranks",
                             cuts[0].first, cuts[1].first);
      return true;
    }
    const auto& [culprit, behind] = cuts.front();
    out.roots = behind;
    out.rule = fmt::format("every late transfer crosses link {}, the only way between ranks {} and the rest of the group",
                           culprit, fmt::join(behind, ", "));
    add_scores(members, out);
    for (double s : note_late_slowdowns(out)) out.slowdown = std::max(out.slowdown, s);
    return true;
  }

  // 4b, a link every late transfer crosses that cuts no rank off (a torus link carries the
  //     routes of ranks on either side): no rank to drop takes it off their routes (SimGrid's
  //     routes are static, and most cross it in transit), but the algorithm's pairs can
  //     avoid it: the same members regroup in another order (regroup_avoiding). Otherwise
  //     the trace names it and nobody is dropped. The links named are those the late data
  //     crosses when they too cut no rank off: a transfer seen late from both ends is read
  //     from its lower rank, whose route may be the healthy way (recursive doubling's 249
  //     and 253 on torus:8x8x4, whose data from 253 crosses 255's slow link to 248).
  bool judge_uncut_link(std::vector<std::string_view> shared, const std::vector<int>& members, const Waits& waits,
                        Judgement& out) {
    if (shared.empty()) return false;
    if (!waits.late_flows.empty()) {
      const RouteCache& routes = routes_of(state_.setup.model);
      std::vector<std::string_view> by_data = links_crossed_by_all(waits.late_flows);
      std::erase_if(by_data, [&](std::string_view link) { return !ranks_behind(routes, members, link).empty(); });
      if (!by_data.empty()) shared = by_data;
    }
    for (std::string_view link : shared) out.slow_links.emplace_back(link);
    // Start afresh, as after congestion: a later window may still single out a rank whose
    // own transfers cross the link (recursive doubling's partner of the link's owner), and
    // dropping that one may pay.
    late_seen_.clear();
    const char* them = shared.size() > 1 ? "them" : "it";
    out.rule = fmt::format("every late transfer crosses link{} {}, which cuts no rank off: dropping a rank would not "
                           "take {} off their routes (SimGrid's routes are static)",
                           shared.size() > 1 ? "s" : "", fmt::join(shared, ", "), them);
    if (waits.broken.empty() && regroup_avoiding(shared, waits.late_flows, out))
      out.rule += fmt::format("; the same members regroup {}, where the algorithm's pairs avoid {}", new_order(out.order),
                              them);
    else
      out.rule += "; nobody dropped";
    return true;
  }

  // 4c. Every late transfer's data crosses a link the other way from a half the group's
  //     order already avoids as slow: the link is slow both ways. A slow-link fault on a
  //     link slows both its halves; a rank's slow NIC slows its way out and its way in, two
  //     links (on torus:4x4x4 rank 6's are 6 -> 5 and 22 -> 6), never one link both ways.
  //     So the link is at fault, not the rank at its end that the late transfers involve:
  //     the double binary tree with the link 5-6 at 1% kept off 5 -> 6, then met 6 -> 5
  //     in 6's transfer with 0 and dropped 6, healthy (Rabenseifner too, by 6 -> 25). The
  //     same members regroup in an order that keeps off both ways, when one pays (the
  //     search goes on place by place: no rank is to blame); otherwise false, and the
  //     other rules judge (false as well when nothing says the link is slow both ways).
  bool judge_link_slow_both_ways(const Waits& waits, Judgement& out) {
    if (waits.late_flows.empty() || avoided_halves_.empty() || !waits.broken.empty()) return false;
    const RouteCache& routes = routes_of(state_.setup.model);
    auto avoided = [&](int id) {
      return std::find(avoided_halves_.begin(), avoided_halves_.end(), id) != avoided_halves_.end();
    };
    std::vector<std::string_view> slow;  // the physical links of the halves avoided as slow (up)
    for (int half : avoided_halves_)
      if (routes.simgrid_link(half)->is_on()) slow.push_back(physical(half));
    std::vector<std::string_view> shared = links_crossed_by_all(waits.late_flows);
    std::erase_if(shared, [&](std::string_view link) { return std::find(slow.begin(), slow.end(), link) == slow.end(); });
    std::vector<int> twins = slow_halves(waits.late_flows, shared);
    std::erase_if(twins, avoided);
    if (twins.empty()) return false;
    shared.clear();
    for (int half : twins) shared.push_back(physical(half));
    // No order that pays: the other rules judge as before (5b's regroup around the late
    // route, 5c's probes), each search having added its halves.
    if (!regroup_avoiding(shared, waits.late_flows, out, true)) return false;
    out.slow_links.assign(shared.begin(), shared.end());
    late_seen_.clear();  // the link explains them: a later window judges afresh
    out.rule = fmt::format("every late transfer crosses link{} {} the other way from a half the group's order avoids "
                           "as slow: slow both ways, a link's fault (a rank's slow NIC slows a way out and a way in, "
                           "two links), not a rank's; the same members regroup {}, where the algorithm's pairs avoid {}",
                           shared.size() > 1 ? "s" : "", fmt::join(shared, ", "), new_order(out.order),
                           shared.size() > 1 ? "them" : "it");
    note_late_slowdowns(out);
    return true;
  }

  // The physical links that the route of every one of `late` crosses (either way).
  std::vector<std::string_view> links_crossed_by_all(const std::vector<std::pair<int, int>>& late) const {
    const RouteCache& routes = routes_of(state_.setup.model);
    std::vector<std::string_view> shared = physical_links(routes, late.front().first, late.front().second);
    for (auto [a, b] : late)
      std::erase_if(shared, [&](std::string_view link) { return !route_crosses(routes, a, b, link); });
    return shared;
  }

  // 4a. Every late transfer involves `common`, and every one also crosses a link further on
  //     that is not `common`'s own (a torus link in transit: the root's transfers to the
  //     ranks behind it). When a transfer of `common` through the same own link, whose route
  //     avoids that link, ended on time while the late ones ran, `common` kept pace: the
  //     link explains the late transfers, not the rank. Dropping `common` would only move
  //     the link onto another rank's routes: nobody is dropped. The same members regroup
  //     in an order whose pairs avoid the link, if one does (order_avoiding); otherwise the
  //     trace names it as a slow link. False when the evidence does not single out such a
  //     link, and when a transfer broke (a link down in transit still names the common rank).
  //     A link named so in an earlier window stays slow (its transfers said so): without a
  //     transfer on time in this one, it still explains late transfers that all cross it in
  //     transit. (`direct` on torus:4x4x4, rank 35's NIC at 1%: 35 dropped, its host's link
  //     19 -> 35 still carries the routes from 16-31 to 51; named slow once, nobody dropped,
  //     and in a later window, with 51's last on-time transfer before it, 51 was dropped,
  //     healthy.)
  bool judge_transit_link(int common, const std::vector<std::pair<int, int>>& late, const Waits& waits, Judgement& out) {
    if (late.size() < 2 || !waits.broken.empty() || waits.late_began < 0) return false;
    std::vector<std::string_view> transit = links_crossed_by_all(late);
    std::vector<int> partners;
    for (auto [a, b] : late) {
      const int other = a == common ? b : a;
      partners.push_back(other);
      for (int id : end_links(common, other))
        if (id >= 0) std::erase(transit, physical(id));
    }
    if (transit.empty()) return false;
    const std::optional<OnTime> kept = on_time_avoiding(common, partners, transit, waits.late_began);
    const char* them = transit.size() > 1 ? "them" : "it";
    if (kept) {
      out.evidence.push_back(fmt::format("{}'s transfer with {} ended on time at {:.9g} (pace {:.3g}), its route clear "
                                         "of link{} {}", common, kept->peer, kept->at, kept->pace,
                                         transit.size() > 1 ? "s" : "", fmt::join(transit, ", ")));
      out.rule = fmt::format("every late transfer involves rank {} but also crosses link{} {} further on, and its "
                             "transfer with {} clear of {} ended on time: the link is slow, not the rank",
                             common, transit.size() > 1 ? "s" : "", fmt::join(transit, ", "), kept->peer, them);
      for (std::string_view link : transit)
        if (std::find(slow_in_transit_.begin(), slow_in_transit_.end(), link) == slow_in_transit_.end())
          slow_in_transit_.emplace_back(link);
    } else {
      std::erase_if(transit, [&](std::string_view link) {
        return std::find(slow_in_transit_.begin(), slow_in_transit_.end(), link) == slow_in_transit_.end();
      });
      if (transit.empty()) return false;
      them = transit.size() > 1 ? "them" : "it";
      out.rule = fmt::format("every late transfer involves rank {} but also crosses link{} {} further on, found slow in "
                             "transit in an earlier window: the link is slow, not the rank",
                             common, transit.size() > 1 ? "s" : "", fmt::join(transit, ", "));
    }
    for (std::string_view link : transit) out.slow_links.emplace_back(link);
    late_seen_.clear();  // as after a slow link that cuts no rank off: a later window judges afresh
    if (!regroup_avoiding(transit, waits.late_flows, out)) {
      out.rule += "; nobody dropped";
      return true;
    }
    out.rule += fmt::format("; the same members regroup {}, where the algorithm's pairs avoid {}", new_order(out.order), them);
    return true;
  }

  // The same members in an order whose pairs avoid the halves of `links` that `flows`
  // cross, and every half avoided before in this run (a slow link stays slow: two orders,
  // each avoiding one of two slow links, would otherwise take turns for ever). The
  // collective under way is abandoned and redone in it (as after rule 1c). False when no
  // order avoids them, and when an order was sought for each of these halves already,
  // found or not (an order that still meets them would only move them). Each search adds
  // a half, so searches and regroups are few.
  // `exhaustive`: the link is known to be at fault, not a rank (judge_link_slow_both_ways):
  // when no swap helps, the orders are searched place by place as for a link down.
  bool regroup_avoiding(const std::vector<std::string_view>& links, const std::vector<std::pair<int, int>>& flows,
                        Judgement& out, bool exhaustive = false) {
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
    out.order = order_avoiding(avoided, state_.membership.current().members(), false, exhaustive);
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
  bool regroup_around_down_links(Judgement& out) {
    const RouteCache& routes = routes_of(state_.setup.model);
    std::vector<int> avoided = halves_kept_off();
    std::vector<int> down;
    for (int half : avoided)
      if (!routes.simgrid_link(half)->is_on()) down.push_back(half);
    std::sort(down.begin(), down.end());  // named in the route cache's order
    std::vector<std::string> names;
    for (int half : down) {
      names.emplace_back(routes.simgrid_link(half)->get_name());
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

  // A regroup must be predicted to save at least 10% of the time left.
  static constexpr double regroup_margin = 0.9;

  // A regroup redoes the collective under way in full; keeping the order finishes it and
  // the rounds left. Both are priced by the contention model on the platform's routes with
  // the slow `halves` at 1 / s of their bandwidth (s: the late transfers' median slowdown):
  // a slow link gates every step of a ring but only some transfers of a tree (a binary
  // tree on torus:4x4x4 with a link at 25%: its transfers x4, its rounds x1.03, and two
  // redos cost more than they gained). The regroup pays when it is predicted 10% faster
  // and s is at least 1 / straggler_threshold. In the evidence either way.
  bool regrouping_pays(const std::vector<int>& halves, const std::vector<int>& order, Judgement& out) const {
    std::vector<double> slowdowns;
    for (int waiter : late_waiters_) slowdowns.push_back(detector_.slowdown(waiter));
    if (slowdowns.empty()) return false;
    const double slowdown = std::max(1.0, median_of(slowdowns));
    if (slowdown * state_.setup.scenario->recovery.straggler_threshold < 1) return false;
    // A late transfer that has moved no byte past its deadline (a link with seconds of
    // latency) has no pace to price: keeping it could take any time.
    for (int waiter : late_waiters_)
      if (detector_.transfer_start(waiter) >= 0 && detector_.transfer_moved(waiter) <= 0) {
        out.evidence.push_back(fmt::format("{}'s late transfer with {} has moved no byte: the order is not kept", waiter,
                                           detector_.activity(waiter).peer));
        return true;
      }
    const CommGroup& group = state_.membership.current();
    // How much of the collective a redo throws away: the late ranks' progress (the least).
    double done = 1;
    for (int waiter : late_waiters_) done = std::min(done, detector_.collective_done(waiter));
    const RunSetup& setup = state_.setup;
    const std::shared_ptr<const Network> slowed = slowed_network(setup.model.network, halves, 1 / slowdown);
    auto priced = [&](const CommGroup& members) {
      ModelInput in = setup.model_for(members);
      in.network = slowed;
      return model_time(*setup.algorithm, in);
    };
    const double kept = priced(group);
    const double regrouped = priced(CommGroup(group.epoch() + 1, order, group.bytes_per_elem(), state_.record.messages));
    const int remaining = setup.scenario->training.rounds - lowest_round(group, {});
    const double later = std::max(0, remaining - 1);
    const double compute = compute_seconds(state_);
    const double keep = (1 - done) * kept + later * (compute + kept);
    const double regroup = verdict_seconds(state_) + regrouped + later * (compute + regrouped);
    out.evidence.push_back(fmt::format("prediction for {} remaining round(s), {:.3g} of this collective done, the slow "
                                       "links at 1/{:.3g} of their bandwidth: keep the order {:.9g} s, regroup {:.9g} s",
                                       remaining, done, slowdown, keep, regroup));
    // A margin for what the model does not see: the verdicts, and the detection of the
    // late transfers again in the new order when it meets a second slow link.
    return regroup < regroup_margin * keep;
  }

  // How `order` differs from the group's: a rotation names its new group rank 0, any
  // other order the members that moved.
  std::string new_order(const std::vector<int>& order) const {
    const std::vector<int>& members = state_.membership.current().members();
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
  std::vector<int> slow_halves(const std::vector<std::pair<int, int>>& flows,
                               const std::vector<std::string_view>& transit) const {
    if (flows.empty()) return {};
    const RouteCache& routes = routes_of(state_.setup.model);
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
  // rank) cross none of the link `halves` either way (sim/order_search.hpp: a rotation of
  // the current order first, so that a ring keeps its neighbours, then swaps). Empty when
  // the current order avoids them already, when the search finds no order, and when the
  // result belongs to a rank (only an allreduce's is everyone's; a sharded run's shards
  // follow the group rank). An algorithm whose every rank talks to most others (direct)
  // has the same pairs in every order: not searched.
  std::vector<int> order_avoiding(const std::vector<int>& halves) const {
    return order_avoiding(halves, state_.membership.current().members());
  }
  // (`share`: the members are about to share the model with a joiner, as below.)
  std::vector<int> order_avoiding(const std::vector<int>& halves, const std::vector<int>& members, bool share = false,
                                  bool exhaustive = false) const {
    const std::optional<PairSearch> search =
        pair_search(halves, static_cast<int>(members.size()), share || sharing_model(members), exhaustive);
    return search ? collsim::order_avoiding(members, search->pairs, search->search) : std::vector<int>{};
  }

  // Whether a member of `members` still waits for the model (it joined, and the share has
  // not reached it): the group's next rounds begin with the share.
  bool sharing_model(const std::vector<int>& members) const {
    return std::any_of(members.begin(), members.end(), [&](int world) { return state_.membership.awaiting_model(world); });
  }

  // The algorithm's pairs among p members and a search for orders whose pairs cross none of
  // the link `halves` (read by reference: they must outlive the search); nullopt when the
  // order of the members does not matter to the result or to the pairs (order_avoiding
  // says which).
  struct PairSearch {
    RankPairs pairs;
    OrderSearch search;
  };
  // `share`: the group's first rounds share the model with a joiner (a binomial broadcast
  // from the first member that has it, sim/worker.cpp share_model): its pairs are sought
  // too, from group rank 0 and from 1 (where the joiner took place 0). A double binary tree
  // on torus:4x4x4 with rank 20's link down kept its own pairs off the link when rank 10
  // rejoined, but the share's transfer from 23 to 25 crossed it, and the run stopped.
  // `exhaustive`: the place-by-place search for slow halves too (regroup_avoiding).
  std::optional<PairSearch> pair_search(const std::vector<int>& halves, int p, bool share, bool exhaustive = false) const {
    const RunSetup& setup = state_.setup;
    if (halves.empty() || setup.scenario->collective.kind != Collective::allreduce || setup.zero3 ||
        setup.algorithm == nullptr)
      return std::nullopt;
    PairSearch found;
    found.pairs = setup.algorithm->partners(p, root_in_group(setup.args.root, p), servers_in_group(setup.args.servers, p));
    if (found.pairs.size() > 16 * static_cast<size_t>(p)) return std::nullopt;
    // A share across a slow half is only slower: only the halves down bind it.
    const RouteCache& routes = routes_of(setup.model);
    const bool any_down = std::any_of(halves.begin(), halves.end(), [&](int id) { return !routes.simgrid_link(id)->is_on(); });
    if (share && any_down && setup.regression != nullptr)
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
  std::vector<int> keeping_off_slow_links(std::vector<int> members, bool share = false) const {
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
  std::vector<int> halves_kept_off() const {
    std::vector<int> halves = avoided_halves_;
    if (!links_may_go_down_) return halves;
    const RouteCache& routes = routes_of(state_.setup.model);
    for (size_t id = 0; id < routes.links(); ++id)
      if (!routes.simgrid_link(static_cast<int>(id))->is_on() &&
          std::find(halves.begin(), halves.end(), static_cast<int>(id)) == halves.end())
        halves.push_back(static_cast<int>(id));
    return halves;
  }

  // What halves_kept_off() holds, in words.
  std::string links_kept_off() const {
    const RouteCache& routes = routes_of(state_.setup.model);
    const std::vector<int> halves = halves_kept_off();
    auto is_down = [&](int id) { return !routes.simgrid_link(id)->is_on(); };
    const bool down = std::any_of(halves.begin(), halves.end(), is_down);
    const bool slow = std::any_of(halves.begin(), halves.end(), [&](int id) { return !is_down(id); });
    if (slow && down) return "the slow links avoided before and the links down";
    return down ? "the links down" : "the slow links avoided before";
  }

  // A transfer of `world` that ended on time after `since` at full pace (at least
  // recovery.straggler_threshold of its expected pace; seen from either end), with a
  // member that is not one of `partners`, by one of the own links its transfers with
  // `partners` use, on a route that crosses none of `links`; nullopt when there is none.
  struct OnTime {
    int peer;
    double at, pace;
  };
  std::optional<OnTime> on_time_avoiding(int world, const std::vector<int>& partners,
                                         const std::vector<std::string_view>& links, double since) const {
    const RouteCache& routes = routes_of(state_.setup.model);
    const double full_pace = state_.setup.scenario->recovery.straggler_threshold;
    auto clear = [&](int peer, const RankActivity& record) {
      if (peer < 0 || peer == world || record.on_time_at <= since || record.on_time_pace < full_pace) return false;
      if (std::find(partners.begin(), partners.end(), peer) != partners.end()) return false;
      for (std::string_view link : links)
        if (route_crosses(routes, world, peer, link)) return false;
      return std::any_of(partners.begin(), partners.end(), [&](int partner) { return clears_port(world, partner, peer); });
    };
    const RankActivity& own = detector_.activity(world);
    if (clear(own.on_time_peer, own)) return OnTime{own.on_time_peer, own.on_time_at, own.on_time_pace};
    for (int member : state_.membership.current().members()) {
      const RankActivity& rank = detector_.activity(member);
      if (rank.on_time_peer == world && clear(member, rank)) return OnTime{member, rank.on_time_at, rank.on_time_pace};
    }
    return std::nullopt;
  }

  // 5b. A pair undecided again, in a later window, with one late transfer from s to r
  //     (sim/link_probe.hpp): s's own link and r's on the route between them (one that cuts
  //     the fewest members off, or that carries that end's transfers only) are each
  //     measured by a probe of the late transfer's size through a witness, a member on
  //     neither side. The one probe past its deadline names the members behind its link;
  //     both or neither: still undecided (a torus link carries others' transfers in
  //     transit: no end owns it, no probe).
  void settle_by_probes(Judgement& out) {
    // One transfer late (seen from one end or both), no other.
    if (late_waiters_.empty()) return;
    for (int world : late_waiters_)
      if (std::find(out.ambiguous.begin(), out.ambiguous.end(), world) == out.ambiguous.end()) return;
    const RankActivity& waiter = detector_.activity(late_waiters_.front());
    const int sender = waiter.receive ? waiter.peer : late_waiters_.front();
    const int receiver = waiter.receive ? late_waiters_.front() : waiter.peer;
    // How much slower the late transfer runs, read before the probes take their time.
    const double slowdown = detector_.slowdown(late_waiters_.front());
    const std::string late_one = fmt::format("{}'s transfer with {} runs x{:.3g} slower than expected",
                                             late_waiters_.front(), waiter.peer, slowdown);
    if (!probe_pair(sender, receiver, waiter.bytes, out) &&
        (regroup_around(sender, receiver, slowdown, out) || !probe_halves(sender, receiver, waiter.bytes, out)))
      return;
    out.rule = fmt::format("one late transfer, {} -> {}, again and again; {}", sender, receiver, out.rule);
    out.ambiguous.clear();
    out.slowdown = std::max(out.slowdown, slowdown);
    out.evidence.push_back(late_one);
  }

  // The same late transfer again and again, and no probe that names one end (on a torus
  // no end owns a link: each carries others' routes in transit; or both ends' probes ran
  // alike): nobody is dropped, but the algorithm's pairs can keep off the late route. The
  // same members regroup in an order whose pairs cross none of its links, when both ends
  // still run and the regroup pays (regrouping_pays).
  bool regroup_around(int sender, int receiver, double slowdown, Judgement& out) {
    if (!still_runs(sender) || !still_runs(receiver)) return false;
    const std::vector<std::string_view> route = physical_links(routes_of(state_.setup.model), sender, receiver);
    if (route.empty() || !regroup_avoiding(route, {{sender, receiver}}, out)) return false;
    out.ambiguous.clear();
    out.slow_links.assign(route.begin(), route.end());
    out.evidence.push_back(fmt::format("{} -> {} runs x{:.3g} slower than expected", sender, receiver, slowdown));
    out.rule = fmt::format("one late transfer, {} -> {}, again and again, and no probe names either end; the same "
                           "members regroup {}, where the algorithm's pairs avoid its route ({})",
                           sender, receiver, new_order(out.order), fmt::join(route, ", "));
    return true;
  }

  // A slow pair reported by the detector (its receives from `sender` slow, no deadline
  // passed: Detector::check_slow_pair): the same probes, then judged as any root.
  void settle_slow_pair(int sender, int receiver) {
    const std::vector<int>& members = state_.membership.current().members();
    for (int world : {sender, receiver})
      if (world < 0 || std::find(members.begin(), members.end(), world) == members.end() || !still_runs(world)) return;
    // Probes cost traffic: none when keeping would pay even if one end were the slow one.
    Judgement judgement;
    judgement.roots = {receiver};
    judgement.slowdown = 1 / std::max(detector_.activity(receiver).slow_pace, 1e-9);
    if (const Prediction p = predict(judgement); p.drop >= p.keep) return;
    judgement = Judgement{};
    if (!probe_pair(sender, receiver, detector_.activity(receiver).bytes, judgement)) return;
    judgement.rule = fmt::format("{}'s receives from {} ran below {:.3g} of their earlier pace {} times in a row, within "
                                 "their deadlines; {}",
                                 receiver, sender, state_.setup.scenario->recovery.straggler_threshold,
                                 state_.setup.scenario->recovery.straggler_window, judgement.rule);
    if (!dropping_pays(judgement)) return;
    rebuild(judgement);
  }

  // Probes each of `ways` (from, to), `across` what it measures, with `bytes` (at least
  // probe_min_bytes), one after the other; in the evidence. Which ran slow: past its
  // deadline, or below straggler_threshold of its expected pace (a fixed recovery.timeout can
  // be far longer than the probe). nullopt when a host was lost meanwhile (a preemption made
  // its probe late, not a link: judged anew).
  struct Probed {
    std::vector<ProbeOutcome> outcomes;
    std::vector<bool> slow;
  };
  std::optional<Probed> run_probes(const std::vector<std::pair<int, int>>& ways, const std::vector<std::string>& across,
                                   double bytes, Judgement& out) {
    bytes = std::max(bytes, probe_min_bytes);
    Probed probed;
    for (size_t i = 0; i < ways.size(); ++i) {
      const auto [from, to] = ways[i];
      sg4::Host* from_host = state_.setup.rank_hosts[static_cast<size_t>(from)];
      sg4::Host* to_host = state_.setup.rank_hosts[static_cast<size_t>(to)];
      if (!from_host->is_on() || !to_host->is_on()) return std::nullopt;
      const double expected = detector_.expected_transfer(from, to, bytes);
      const ProbeOutcome probe =
          probe_transfer(from_host, to_host, bytes, expected, detector_.limit(expected), probe_serial_++);
      probed.outcomes.push_back(probe);
      out.evidence.push_back(fmt::format("probe {} -> {} across {}: {} after {:.9g} s (expected {:.9g} s)", from, to,
                                         across[i], probe.late ? "not over" : "over", probe.took, probe.expected));
    }
    for (auto [from, to] : ways)
      if (!still_runs(from) || !still_runs(to) || !state_.setup.rank_hosts[static_cast<size_t>(from)]->is_on() ||
          !state_.setup.rank_hosts[static_cast<size_t>(to)]->is_on())
        return std::nullopt;
    const double threshold = state_.setup.scenario->recovery.straggler_threshold;
    for (const ProbeOutcome& probe : probed.outcomes) probed.slow.push_back(probe.late || probe_pace(probe) < threshold);
    return probed;
  }
  static double probe_pace(const ProbeOutcome& probe) {
    return probe.took > 0 ? std::min(1.0, probe.expected / probe.took) : 1.0;
  }

  // Probes `sender`'s own link and `receiver`'s on the route between them, each through a
  // witness, with `bytes` (at least probe_min_bytes). True when exactly one was late: `out`
  // then has its side as roots, the rule's probe clause, the probes in evidence, and the
  // late probe's slowdown (a lower bound: it was cut at its deadline). Once per pair and
  // group: probes that settled nothing would settle nothing again.
  bool probe_pair(int sender, int receiver, double bytes, Judgement& out) {
    if (!probed_.insert({state_.membership.current().epoch(), sender, receiver}).second) return false;
    const std::vector<int>& members = state_.membership.current().members();
    const RouteCache& routes = routes_of(state_.setup.model);
    const std::optional<OwnLink> out_link = own_link(routes, members, sender, receiver, sender);
    const std::optional<OwnLink> in_link = own_link(routes, members, sender, receiver, receiver);
    if (!out_link || !in_link) return false;
    const std::optional<int> to_witness = witness(routes, members, sender, *out_link, in_link->side);
    const std::optional<int> from_witness = witness(routes, members, receiver, *in_link, out_link->side);
    if (!to_witness || !from_witness) return false;
    const std::optional<Probed> probed =
        run_probes({{sender, *to_witness}, {*from_witness, receiver}},
                   {std::string(out_link->link), std::string(in_link->link)}, bytes, out);
    if (!probed) return false;
    const auto& [probes, slow] = *probed;
    if (slow[0] == slow[1]) return false;
    const size_t s = slow[0] ? 0 : 1, f = 1 - s;
    const std::array<int, 2> ends{sender, receiver};
    const std::array<const OwnLink*, 2> links{&*out_link, &*in_link};
    out.roots = links[s]->side;
    out.rule = fmt::format("a probe across {}'s link {} ran at {:.3g} of its expected pace{}, one across {}'s link {} at "
                           "{:.3g}",
                           ends[s], links[s]->link, probe_pace(probes[s]), probes[s].late ? " (cut at its deadline)" : "",
                           ends[f], links[f]->link, probe_pace(probes[f]));
    add_scores(members, out);
    out.slowdown = std::max(out.slowdown, 1 / probe_pace(probes[s]));
    return true;
  }

  // 5c. On a torus no end owns a link (no probe in 5b); when no order keeps off the late
  //     route from s to r either (regroup_around), its end halves are measured apart: a
  //     probe that leaves s by the route's first half, one that enters r by its last, each
  //     crossing no other half of the route. A slow half from host A to host B is A's way
  //     out and B's way in, and tells no more: a slow NIC slows one half out of its rank and
  //     one in (the fault on a torus rank). So each of A's other ways in and B's ways out
  //     is probed, from or to the member one link away: the one of A and B with a second
  //     slow half is the root. Neither or both: still undecided (a slow link, or no telling).
  bool probe_halves(int sender, int receiver, double bytes, Judgement& out) {
    if (!halves_probed_.insert({state_.membership.current().epoch(), sender, receiver}).second) return false;
    const RouteCache& routes = routes_of(state_.setup.model);
    const std::vector<int> late = routes.route(sender, receiver).links;  // (a copy: other routes are read meanwhile)
    if (late.empty() || !between_ranks(sender, late.front()) || !between_ranks(receiver, late.back())) return false;
    const std::vector<int>& members = state_.membership.current().members();
    const std::optional<int> to_witness = half_witness(routes, members, sender, receiver, true);
    const std::optional<int> from_witness = half_witness(routes, members, sender, receiver, false);
    if (!to_witness || !from_witness) return false;
    const auto name = [&](int half) { return routes.link(half).name; };
    const std::optional<Probed> ends = run_probes({{sender, *to_witness}, {*from_witness, receiver}},
                                                  {name(late.front()), name(late.back())}, bytes, out);
    if (!ends || ends->slow[0] == ends->slow[1]) return false;
    const int half = ends->slow[0] ? late.front() : late.back();
    // The half's hosts: `a` sends through it, `b` receives.
    const int a = ends->slow[0] ? sender : member_next_door(receiver, half, true);
    const int b = ends->slow[0] ? member_next_door(sender, half, false) : receiver;
    if (a < 0 || b < 0) return false;
    std::vector<std::pair<int, int>> ways;
    std::vector<std::string> across;
    size_t of_a = 0;
    for (auto [peer, way] : next_door(routes, members, a, true))
      if (way != half) ways.emplace_back(peer, a), across.push_back(name(way)), ++of_a;
    for (auto [peer, way] : next_door(routes, members, b, false)) ways.emplace_back(b, peer), across.push_back(name(way));
    // Up to a dozen probes: of the least size that shows a link's bandwidth.
    const std::optional<Probed> seconds = run_probes(ways, across, probe_min_bytes, out);
    if (!seconds) return false;
    std::array<int, 2> slow_halves{-1, -1};  // a's, b's: the index of a second slow half
    for (size_t i = 0; i < ways.size(); ++i)
      if (seconds->slow[i]) slow_halves[i < of_a ? 0 : 1] = static_cast<int>(i);
    if ((slow_halves[0] >= 0) == (slow_halves[1] >= 0)) return false;
    const size_t root = slow_halves[0] >= 0 ? 0 : 1;
    const std::array<int, 2> hosts{a, b};
    out.roots = {hosts[root]};
    out.rule = fmt::format("no order keeps off its route; a probe across {} ran at {:.3g} of its expected pace, and one "
                           "across {}'s {} at {:.3g} too (a slow NIC slows a half out of its rank and one in), none of "
                           "{}'s other ways",
                           name(half), probe_pace(ends->outcomes[ends->slow[0] ? 0 : 1]), hosts[root],
                           across[static_cast<size_t>(slow_halves[root])],
                           probe_pace(seconds->outcomes[static_cast<size_t>(slow_halves[root])]), hosts[1 - root]);
    add_scores(members, out);
    out.slowdown = std::max(out.slowdown, 1 / probe_pace(ends->outcomes[ends->slow[0] ? 0 : 1]));
    return true;
  }

  // The member one link from `end` by `half`: into `end` (`into`), or out of it; -1 if none.
  int member_next_door(int end, int half, bool into) const {
    for (auto [peer, way] : next_door(routes_of(state_.setup.model), state_.membership.current().members(), end, into))
      if (way == half) return peer;
    return -1;
  }

  // The ranks whose progress score stayed below recovery.straggler_threshold x the group's
  // median for recovery.straggler_window steps. One whose slow transfers were all with
  // other such ranks was slowed by them (a tree's leaf under a slow parent): not a root.
  // False when no rank is a straggler.
  bool judge_progress(const std::vector<int>& members, Judgement& out) const {
    const std::vector<int> flagged = detector_.stragglers(members);
    if (flagged.empty()) return false;
    const auto is_flagged = [&](int world) { return std::find(flagged.begin(), flagged.end(), world) != flagged.end(); };
    const RecoverySpec& recovery = state_.setup.scenario->recovery;
    out.median = detector_.median_score(members);
    std::vector<int> pairs;  // flagged ranks and their one slow peer, when either may be the slow one
    for (int world : flagged) {
      const std::vector<int> peers = detector_.window_peers(world);
      out.evidence.push_back(fmt::format("{}'s progress score {:.3g} over its last {} steps (with {}) is below {:.3g} "
                                         "x the group median {:.3g}",
                                         world, detector_.score(world), recovery.straggler_window, fmt::join(peers, ", "),
                                         recovery.straggler_threshold, out.median));
      out.scores.emplace_back(world, detector_.score(world));
      std::vector<int> unflagged;
      for (int peer : peers)
        if (!is_flagged(peer)) unflagged.push_back(peer);
      if (unflagged.empty()) continue;
      // Slow with one peer only, which kept pace with others through another link of its
      // own (a GPU's NVLink while its NIC is slow): either end may be the slow one.
      if (unflagged.size() == 1) {
        const int peer = unflagged.front();
        const RankActivity& other = detector_.activity(peer);
        // On time within its deadline is not enough: at a pace below the threshold, the
        // peer's own link may be the slow one (Rabenseifner on nodes:8:8, rank 60's device
        // link at 25%: 60's transfer with 56 took 2.7x its expected time, within the 3x
        // deadline, and cleared 60; healthy 59 was named and kept in its place).
        if (other.on_time_peer < 0 || other.on_time_peer == world || other.on_time_pace < recovery.straggler_threshold ||
            !clears_port(peer, world, other.on_time_peer)) {
          pairs.insert(pairs.end(), {world, peer});
          continue;
        }
      }
      out.roots.push_back(world);
    }
    if (out.roots.empty()) {
      out.ambiguous = pairs.empty() ? flagged : pairs;
      out.rule = "the progress scores do not single out a rank";
      return true;
    }
    out.rule = "its progress score stayed below the threshold for the window (a straggler)";
    double lowest = 1;
    for (int world : out.roots) lowest = std::min(lowest, detector_.score(world));
    out.slowdown = std::max(1.0, out.median / std::max(lowest, 1e-300));
    out.pace_measured = true;
    return true;
  }

  // The roots' scores and the median, when they have a full window (for the trace).
  void add_scores(const std::vector<int>& members, Judgement& out) const {
    out.median = detector_.median_score(members);
    for (int world : out.roots)
      if (const double mine = detector_.score(world); mine >= 0) out.scores.emplace_back(world, mine);
  }

  // The straggler rule's prices (sim/straggler_price.hpp) for the judgement's roots.
  Prediction predict(const Judgement& judgement) const {
    Slowness slow;
    slow.roots = judgement.roots;
    slow.slowdown = judgement.slowdown;
    slow.compute_bound = judgement.compute_bound;
    slow.pace_measured = judgement.pace_measured;
    slow.round = lowest_round(state_.membership.current(), judgement.roots);
    slow.late_waiters = late_waiters_;
    // What the measure was against: a computation's expectation when it began, a
    // transfer's the root's tolerance now (its window was forgotten when it was kept).
    for (int world : judgement.roots)
      slow.tolerance = std::max(slow.tolerance, judgement.compute_bound ? detector_.compute_tolerance(world)
                                                                        : detector_.activity(world).tolerance);
    return prices_.predict(slow);
  }

  bool dropping_pays(Judgement& judgement) {
    const CommGroup& group = state_.membership.current();
    const int round = lowest_round(group, judgement.roots);
    if (members_without(group.members(), judgement.roots).empty()) return true;  // rebuild reports it
    const auto [remaining, done, keep, drop, priced_s] = predict(judgement);
    const double s = judgement.slowdown;
    // Roots whose transfers run at about their expected pace are late only against a
    // deadline shorter than that pace (a fixed recovery.timeout below a transfer's expected
    // time): dropping them gains no more than the model's change with p (a naive
    // allreduce's root has one partner fewer), which is no culprit's cost. Slower than
    // 1 / straggler_threshold, as the straggler rule asks, or not at all.
    if (!judgement.certain && s < 1 / state_.setup.scenario->recovery.straggler_threshold) {
      judgement.evidence.push_back(fmt::format("x{:.3g} slower is no slower than 1 / straggler_threshold: nobody dropped", s));
      prediction_ = {-1, -1};
      return false;
    }
    judgement.evidence.push_back(fmt::format(
        "prediction for {} remaining round(s), {:.3g} of this collective done: keep {:.9g} s (x{:.3g} slower), "
        "drop {:.9g} s", remaining, done, keep, priced_s, drop));
    prediction_ = {keep, drop};
    if (drop < keep) return true;
    if (!judgement.pace_measured) {
      prediction_ = {-1, -1};  // wait for whole steps: the next report, or the progress score
      return false;
    }
    // Keeping pays: its deadlines stretch to its measured pace, and the decision is recorded,
    // once: a late computation is judged again at each check (its s grows; a drop may come),
    // and recorded each time it was kept over 20 times (a host at 30% under the double binary
    // tree on nodes:8:8, 16 MiB).
    bool again = true;
    for (int world : judgement.roots) {
      detector_.keep(world, 1.5 * priced_s);
      detector_.forget_progress(world);  // its steps so far were judged; its new pace is what counts now
      const RankActivity& rank = detector_.activity(world);
      const double computing_since = judgement.compute_bound ? rank.since : -1;
      auto [at, added] = kept_computing_.try_emplace(world, computing_since);
      again &= !added && computing_since >= 0 && at->second == computing_since;
      at->second = computing_since;
    }
    if (again) return false;
    RecoveryEvent event = event_for(group, judgement);
    event.epoch_after = group.epoch();
    event.round = round;
    event.kept_ranks = judgement.roots;
    event.group = group.members();
    event.reason = fmt::format("kept rank{} {}: {}, but keeping is predicted faster than a rebuild",
                               judgement.roots.size() > 1 ? "s" : "", fmt::join(judgement.roots, ", "), judgement.rule);
    state_.record.recoveries.push_back(event);
    return false;
  }

  double platform_model(const CommGroup& group) const { return prices_.platform_model(group); }
  double healthy_model(const CommGroup& group) const { return prices_.healthy_model(group); }


  // The lowest round a member is in (a joiner still waiting for the model is in none).
  int lowest_round(const CommGroup& group, const std::vector<int>& dropped) const {
    int round = std::numeric_limits<int>::max();
    for (int world : members_without(group.members(), dropped))
      if (!state_.membership.awaiting_model(world)) round = std::min(round, detector_.activity(world).round);
    return round == std::numeric_limits<int>::max() ? 0 : round;
  }

  RecoveryEvent event_for(const CommGroup& group, const Judgement& judgement) const {
    RecoveryEvent event;
    const double now = sg4::Engine::get_clock();
    event.epoch_before = group.epoch();
    event.detected = first_suspicion(group, judgement);
    event.fault_time = fault_time(judgement, event.detected);
    event.rebuilt = now;
    event.rule = judgement.rule;
    event.evidence = judgement.evidence_lines();
    event.prediction_keep = prediction_.first;
    event.prediction_drop = prediction_.second;
    // Layered training: the earliest bucket a member was reducing is the one redone first.
    for (int world : group.members()) {
      const int bucket = state_.workers[static_cast<size_t>(world)].bucket;
      if (bucket >= 0 && (event.bucket < 0 || bucket < event.bucket)) event.bucket = bucket;
    }
    event.scores = judgement.scores;
    event.score_median = judgement.median;
    return event;
  }

  // When the fault that mattered struck: for each rank judged (a root, or a candidate), the
  // last fault applied before the detection that struck it, and the earliest of those (the
  // one whose detection took longest); without one (a fault on a shared link), the last
  // fault applied before the detection. -1: none.
  double fault_time(const Judgement& judgement, double detected) const {
    std::vector<int> judged = judgement.roots;
    judged.insert(judged.end(), judgement.ambiguous.begin(), judgement.ambiguous.end());
    std::map<int, double> struck;  // judged rank -> the last fault that struck it
    double any = -1;
    for (const FaultEvent& fault : state_.record.fault_events) {
      if (fault.action != "applied" || fault.time > detected) continue;
      any = fault.time;
      for (const std::vector<int>* ranks : {&fault.ranks, &fault.cut_off})
        for (int rank : *ranks)
          if (std::find(judged.begin(), judged.end(), rank) != judged.end()) struck[rank] = fault.time;
    }
    if (struck.empty()) return any;
    double earliest = detected;
    for (const auto& [rank, time] : struck) earliest = std::min(earliest, time);
    return earliest;
  }

  // The earliest wait (or failure) in force among the members: when the stall began to show.
  // Only the waits on the ranks judged (roots, candidates) and their own (while they run)
  // are symptoms of what was judged: in layered training a rank waits past its deadline on
  // a peer still in backward, a wait that says nothing. A dead or cut-off rank shows in the
  // transfers with it that broke, or at this report (a wait on a peer that never posted
  // passed its deadline perhaps before it died). Without a rank judged (a stop), or when
  // none of those waits is late yet, every wait counts.
  double first_suspicion(const CommGroup& group, const Judgement& judgement) const {
    std::set<int> judged(judgement.roots.begin(), judgement.roots.end());
    judged.insert(judgement.ambiguous.begin(), judgement.ambiguous.end());
    if (judgement.certain) {
      double first = sg4::Engine::get_clock();
      for (int world : group.members()) {
        const RankActivity& rank = detector_.activity(world);
        if (rank.doing == RankActivity::Doing::failed && judged.count(rank.peer)) first = std::min(first, rank.since);
      }
      return first;
    }
    auto symptom = [&](int world) {
      return judged.count(detector_.activity(world).peer) ||
             (judged.count(world) && still_runs(world) && state_.setup.rank_hosts[static_cast<size_t>(world)]->is_on());
    };
    const double now = sg4::Engine::get_clock();
    double first = now;
    if (!judged.empty())
      for (int world : group.members())
        if (symptom(world)) first = std::min(first, suspicious_since(world));
    if (first < now) return first;
    for (int world : group.members()) first = std::min(first, suspicious_since(world));
    return first;
  }

  // When `world`'s wait was checked past its deadline or its transfer broke (the clock:
  // neither yet).
  double suspicious_since(int world) const {
    const double now = sg4::Engine::get_clock();
    const RankActivity& rank = detector_.activity(world);
    if (rank.doing == RankActivity::Doing::failed) return rank.since;
    if (rank.doing != RankActivity::Doing::waiting || detector_.transfer_over(world)) return now;
    const double started = detector_.transfer_start(world);
    const double suspicious =
        (started < 0 ? rank.since : started) + detector_.wait_limit(world, rank.expected) + detector_.check_margin();
    return std::min(suspicious, now);
  }

  // Late transfers that all cross links no drop can avoid: in the trace once per epoch and
  // set of links (the group goes on, slower).
  void record_slow_links(const Judgement& judgement) {
    const CommGroup& group = state_.membership.current();
    if (group.epoch() == last_slow_links_.first && judgement.slow_links == last_slow_links_.second) return;
    last_slow_links_ = {group.epoch(), judgement.slow_links};
    RecoveryEvent event = event_for(group, judgement);
    event.epoch_after = group.epoch();
    event.round = lowest_round(group, {});
    event.group = group.members();
    event.reason = judgement.rule;
    state_.record.recoveries.push_back(event);
  }

  void record_undecided(const Judgement& judgement, double window) {
    const CommGroup& group = state_.membership.current();
    // the same doubt in this epoch: already in the trace
    if (!undecided_.emplace(group.epoch(), judgement.ambiguous).second) return;
    RecoveryEvent event = event_for(group, judgement);
    event.epoch_after = group.epoch();
    event.round = lowest_round(group, {});
    event.group = group.members();
    event.undecided_ranks = judgement.ambiguous;
    event.reason = fmt::format("undecided between ranks {}: {}; nobody dropped, judged again after {:.9g} s",
                               fmt::join(judgement.ambiguous, ", "), judgement.rule, window);
    state_.record.recoveries.push_back(event);
  }

  // Verdicts for the members. The flags come first: a rank whose transfer breaks because a
  // peer abandoned it knows it is the verdict, not a new failure. A suspicious wait hears
  // the verdict at once; a wait not yet suspicious, at its deadline.
  void deliver(const CommGroup& group, const std::vector<int>& dropped, const std::shared_ptr<CommGroup>& next,
               int resume_round, const std::vector<int>& postponed = {}) {
    for (int world : group.members()) {
      RankActivity& rank = detector_.activity(world);
      rank.verdict = true;
      rank.dropped = std::find(dropped.begin(), dropped.end(), world) != dropped.end();
      // What it waits on belongs to the abandoned epoch: no evidence for the next one.
      if (rank.doing != RankActivity::Doing::computing) {
        rank.doing = RankActivity::Doing::idle;
        rank.activity = nullptr;
      }
    }
    for (int world : group.members()) {
      RankActivity& rank = detector_.activity(world);
      // Only a worker still in the run hears it: a verdict nobody reads would stay in the
      // mailbox and be taken by the next worker on that rank (one whose host came back
      // asks to rejoin and waits for that answer, not for this one).
      const WorkerFate fate = state_.workers[static_cast<size_t>(world)].fate;
      if (!state_.setup.rank_hosts[static_cast<size_t>(world)]->is_on() || (fate != WorkerFate::running && !admitted(world)))
        continue;
      // A postponed joiner's answer is its admission at a later round (rebuild).
      if (std::find(postponed.begin(), postponed.end(), world) != postponed.end()) continue;
      send(world, Verdict{rank.dropped, rank.dropped ? nullptr : next, resume_round});
      // One done with the last round, waiting for the others, reads it now.
      if (const auto& waiting = state_.workers[static_cast<size_t>(world)].waiting_for_the_group) waiting->release();
    }
  }

  // Verdicts queue in the worker's mailbox, in order; the detector counts them so that the
  // worker acts on the last one only (a group rebuilt twice before it read the first).
  void send(int world, Verdict verdict) {
    Verdict* letter = detector_.letter(std::move(verdict));
    detector_.verdict_sent(world, letter);
    tell(state_, detector_, world, letter);
  }

  // `world`'s last verdict did not cross (a link on its way went down): a resender on the
  // control host sends it again once the way is up, checking at doubling intervals for up
  // to link_patience(), as for the coordinator's own link; then it gives up (the worker,
  // waiting twice as long, is cut off and leaves). Nothing is sent when the worker has
  // read a later verdict meanwhile, or is gone (its host down, or a new worker there).
  void resend(int world) {
    const double patience = link_patience();
    const int incarnation = detector_.incarnation(world);
    // It runs until the simulation ends, like the coordinator (run never returns): `this` outlives it.
    sg4::Actor::create("resender", state_.setup.control_host, [this, world, incarnation, patience] {
      sg4::Host* host = state_.setup.rank_hosts[static_cast<size_t>(world)];
      double waited = 0, step = detector_.limit(0);
      while (detector_.verdict_lost(world) && detector_.incarnation(world) == incarnation && host->is_on()) {
        if (way_up(world)) {
          Verdict* letter = detector_.last_letter(world);
          detector_.verdict_sent(world, letter);
          tell(state_, detector_, world, letter);
          return;
        }
        if (waited >= patience) {
          lost_contact();
          return;
        }
        const double pause = std::min(step, patience - waited);
        sg4::this_actor::sleep_for(pause);
        waited += pause;
        step *= 2;
      }
    })->daemonize();
  }

  // Whether a verdict can reach `world` now: the links between the control host and its
  // host are up, or (a worker on the control host) a courier can carry it.
  bool way_up(int world) {
    if (on_control_host(state_, world)) return courier_for(state_, world) >= 0;
    const std::vector<const sg4::Link*>& links = heartbeat_route(world);
    return std::all_of(links.begin(), links.end(), [](const sg4::Link* link) { return link->is_on(); });
  }

  void release_everyone() {
    const CommGroup& group = state_.membership.current();
    deliver(group, group.members(), nullptr, 0);
  }

  void rebuild(const Judgement& judgement) {
    const CommGroup& group = state_.membership.current();
    std::vector<int> survivors = judgement.order.empty() ? members_without(group.members(), judgement.roots) : judgement.order;
    const int min_workers = state_.setup.scenario->recovery.min_workers;
    if (static_cast<int>(survivors.size()) < std::max(1, min_workers)) {
      std::string reason =
          survivors.empty()
              ? "every worker would have to be dropped"
              : fmt::format("dropping rank{} {} would leave {} worker{}, below recovery.min_workers {}",
                            judgement.roots.size() > 1 ? "s" : "", fmt::join(judgement.roots, ", "), survivors.size(),
                            survivors.size() == 1 ? "" : "s", min_workers);
      stop_run(judgement, survivors, std::move(reason));
      return;
    }
    const int resume_round = lowest_round(group, judgement.roots);
    const std::vector<int> postponed = postponed_joiners(judgement.roots, resume_round);
    survivors = members_without(survivors, postponed);
    std::string kept_off;
    if (judgement.order.empty() || !postponed.empty()) {
      const std::vector<int> before = survivors;
      survivors = keeping_off_slow_links(std::move(survivors));
      if (survivors != before) kept_off = "; the survivors take an order that keeps off " + links_kept_off();
    }
    auto next = state_.new_group(group.epoch() + 1, survivors);
    RecoveryEvent event = event_for(group, judgement);
    event.epoch_after = next->epoch();
    event.round = resume_round;
    event.dropped_ranks = judgement.roots;
    for (int world : judgement.roots) event.dropped_hosts.push_back(state_.setup.rank_hosts[static_cast<size_t>(world)]->get_name());
    event.group = survivors;
    event.postponed_ranks = postponed;
    event.reason = judgement.rule + kept_off;
    state_.record.recoveries.push_back(event);
    state_.membership.rebuild(next);
    deliver(group, judgement.roots, next, resume_round, postponed);
    failures_ = false;
    rebuilt_at_ = sg4::Engine::get_clock();
    late_seen_.clear();
    detector_.new_epoch();
    prediction_ = {-1, -1};
    // Postponed joiners join again at the first round after the one the group resumes
    // (nobody is past it: a member ahead goes back); workers that came back meanwhile join
    // at the next round nobody has started.
    for (int world : postponed) admit_at(world, resume_round + 1, true);
    std::vector<int> joins;
    joins.swap(waiting_joins_);
    for (int world : joins) admit(world);
  }

  // Joiners the rebuild cannot take along: one that has not received the model (it has no
  // state of its own), or whose round is after the one the group resumes (it has no
  // gradient of that round). They are not dropped: they join again at a later round.
  std::vector<int> postponed_joiners(const std::vector<int>& roots, int resume_round) const {
    std::vector<int> postponed;
    for (const Membership::Joiner& joiner : state_.membership.joiners()) {
      if (std::find(roots.begin(), roots.end(), joiner.world) != roots.end()) continue;
      if (!joiner.has_model || joiner.round > resume_round) postponed.push_back(joiner.world);
    }
    std::sort(postponed.begin(), postponed.end());
    return postponed;
  }

  // A returning worker joins at the next round that no worker has started yet, so that
  // every member switches group at the same round boundary.
  void admit(int world) {
    const CommGroup& group = state_.membership.current();
    // Back before anyone noticed it was gone: it joins once the rebuild has dropped it.
    if (std::find(group.members().begin(), group.members().end(), world) != group.members().end()) {
      waiting_joins_.push_back(world);
      return;
    }
    detector_.activity(world) = RankActivity{};  // a new worker: nothing of the one that was killed
    admit_at(world, state_.membership.next_unstarted_round(), false);
  }

  // Admits `world` at `round` (again, when a rebuild postponed it).
  void admit_at(int world, int round, bool again) {
    const CommGroup& group = state_.membership.current();
    if (round >= state_.setup.scenario->training.rounds) {
      send(world, Verdict{true, nullptr, 0});  // training is over before it could join
      return;
    }
    std::vector<int> members = group.members();
    const std::vector<int> halves = halves_kept_off();
    if (halves.empty()) {
      members.push_back(world);
      std::sort(members.begin(), members.end());
    } else {
      // The group's order avoids slow links: the joiner goes where its pairs avoid them
      // too, next to the member below it first (on most platforms its neighbour), the
      // others in their order, and the search mends what its new pairs still cross.
      int below = -1;
      for (int member : members)
        if (member < world && member > below) below = member;
      const auto place = std::find(members.begin(), members.end(), below);
      const size_t first_try = place == members.end() ? 0 : static_cast<size_t>(place - members.begin()) + 1;
      const int p = static_cast<int>(members.size()) + 1;
      if (const std::optional<PairSearch> search = pair_search(halves, p, true))
        members = order_with(members, world, first_try, search->pairs, search->search);
      else
        members.insert(members.begin() + static_cast<std::ptrdiff_t>(first_try), world);
      members = keeping_off_slow_links(std::move(members), true);
    }
    auto next = state_.new_group(group.epoch() + 1, members);
    state_.membership.admit(round, world, next);

    RecoveryEvent event;
    event.epoch_before = group.epoch();
    event.epoch_after = next->epoch();
    event.round = round;
    event.detected = event.rebuilt = sg4::Engine::get_clock();
    event.joined_ranks = {world};
    event.group = members;
    event.reason = again ? fmt::format("rank {} rejoins at round {} (postponed by the rebuild)", world, round)
                         : fmt::format("rank {} came back and rejoins at round {}", world, round);
    if (!halves.empty())
      event.reason += fmt::format(", at group rank {}, in an order that keeps off {}",
                                  std::find(members.begin(), members.end(), world) - members.begin(), links_kept_off());
    event.rule = "join";
    state_.record.recoveries.push_back(event);
    send(world, Verdict{false, next, round, true});
  }

  RunState& state_;
  Detector& detector_;
  StragglerPrices prices_;  // the straggler rule's two sides
  std::map<int, double> kept_computing_;  // by kept root: the start of the computation it was kept in (-1: none)
  std::vector<int> waiting_joins_;
  double window_ = 0;
  bool failures_ = false;
  double rebuilt_at_ = -1;  // when the last rebuild (rebuild()) delivered its verdicts
  std::pair<int, std::vector<std::string>> last_slow_links_{-1, {}};  // the last recorded (epoch, links)
  std::vector<int> avoided_halves_;  // link halves (route cache ids) that the group's order avoids (regroup_avoiding)
  std::vector<int> sought_halves_;   // and those an order was sought for, found or not
  // Physical links that rule 4a found slow in transit (a rank's transfer clear of them on
  // time while those across them were late): they explain later late transfers too.
  std::vector<std::string> slow_in_transit_;
  std::set<std::pair<int, std::vector<int>>> undecided_;  // (epoch, ranks) left undecided
  bool undecided_before(const std::vector<int>& ranks) const {
    return undecided_.count({state_.membership.current().epoch(), ranks}) > 0;
  }
  int probe_serial_ = 0;                 // names the probes' mailboxes
  std::set<std::array<int, 3>> probed_;  // (epoch, sender, receiver) of the pairs probed (rule 5b)
  std::set<std::array<int, 3>> halves_probed_;  // and of those whose halves were (rule 5c)
  std::vector<int> late_waiters_;  // members whose transfer is late, in the last judgement
  // Late or broken transfers seen in this epoch (lower rank first), and when the first of
  // each pair started (or broke).
  struct LateSeen {
    double since = -1;                              // when it should have ended
    bool into_lower = false, into_higher = false;  // the way its data went: into the lower rank, the higher
  };
  std::map<std::pair<int, int>, LateSeen> late_seen_;
  std::pair<double, double> prediction_{-1, -1};
  double stall_limit_ = -1;  // seconds (give_up_if_stalled), computed at the first use
  int control_rank_ = -1;                                  // a worker on the control host, if any
  // Whether the scenario has a link-down fault: without one no link is ever off, and
  // nobody is cut off by a link (the check reads every member's route to the control host).
  bool links_may_go_down_ = false;
  std::vector<std::pair<bool, std::vector<const sg4::Link*>>> heartbeat_routes_;  // by world rank: read, links
  std::vector<const sg4::Link*> own_links_;                // the control host's links found down
};

}  // namespace

void start_coordinator(RunState& state, Detector& detector) {
  sg4::ActorPtr actor =
      sg4::Actor::create("coordinator", state.setup.control_host, [shared = state.shared_from_this(), &detector] { Coordinator(*shared, detector).run(); });
  actor->daemonize();  // it waits for reports forever; the run ends with the workers
}


}  // namespace collsim
