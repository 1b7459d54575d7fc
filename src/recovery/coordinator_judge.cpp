// The coordinator reads the wait-for graph: roots, late transfers, slow links, progress scores and the straggler rule.
#include "recovery/coordinator_impl.hpp"

namespace collsim::coordination {

// The ranks that every late transfer involves; of two (the ends of the late transfers,
// all between the same pair), one that completed a transfer on time with someone else
// after the first of them should have ended (its start plus its expected time) is
// cleared: its own link kept pace while the pair was already overdue. One that ended
// earlier may have run before the fault (a NIC slowed mid-step: its other transfer of
// the step ended on time just before) and clears nobody; nor does one within its deadline
// at a pace below recovery.straggler_threshold, slowed by the fault for its last part (a
// ring on dragonfly:4:4:4, rank 56's NIC at 1%: 55 -> 56 took 3.6x its time, within the
// deadline, cleared 56, and healthy 57 was dropped).
std::vector<int> Coordinator::common_ends(const std::vector<std::pair<int, int>>& late, const std::map<int, std::set<int>>& partners,
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
    const double threshold = run_.scenario->recovery.straggler_threshold;
    for (int world : common) {
      const RankActivity& rank = detector_.activity(world);
      const int other = world == common[0] ? common[1] : common[0];
      const bool lower = world < other;
      const bool late_in = late_start >= 0 && (lower ? first_late->second.into_lower : first_late->second.into_higher);
      const bool late_out = late_start >= 0 && (lower ? first_late->second.into_higher : first_late->second.into_lower);
      const bool cleared = rank.on_time_peer >= 0 && rank.on_time_peer != other && late_start >= 0 &&
                           rank.on_time_at > late_start && rank.on_time_pace >= threshold &&
                           clears_port(world, other, rank.on_time_peer) &&
                           same_way(world, other, rank.on_time_peer, rank.on_time_receive, late_in, late_out);
      if (cleared) out.evidence.push_back(fmt::format("{} completed a transfer with {} on time at {:.9g}", world,
                                                      rank.on_time_peer, rank.on_time_at));
      else not_cleared.push_back(world);
    }
    common = not_cleared;
  }
  return common;
}

Coordinator::Waits Coordinator::read_waits(const CommGroup& group, const std::set<int>& dead, double now, Judgement& out) {
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
        waits.late_started.push_back(started);
        waits.late_slowdown.push_back(1);
        waits.late_into.push_back(rank.receive ? world : rank.peer);
        waits.late_by_rate.push_back(false);
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
      waits.late_started.push_back(rank.since);
      waits.late_slowdown.push_back(1);
      waits.late_into.push_back(-1);
      waits.late_by_rate.push_back(false);
      waits.broken.emplace_back(world, rank.peer);
      out.evidence.push_back(fmt::format("{} lost its transfer with {} at {:.9g}", world, rank.peer, rank.since));
      for (auto [end, other] : {std::pair{world, rank.peer}, std::pair{rank.peer, world}})
        if (LinkRef port = own_link_down(end, other, dead);
            port.id != nullptr && !dead.count(end) && waits.ports_down.insert(end).second)
          out.evidence.push_back(fmt::format("{}'s own link {} is down", end, engine_.link_name(port)));
    }
  }
  read_paced(group, dead, waits, out);
  waited_on_through_servers(group, dead, waits);
  return waits;
}

// A synchronous parameter server (a process of its own, no member: its waits are not
// followed) cannot answer a pull before every pusher's push has arrived: a member waiting
// on a server that has not started its side waits, through it, on each member still
// computing (it has not pushed). Without this a worker slowed past its deadline behind the
// servers was never dropped: the others waited on the servers, not on it.
void Coordinator::waited_on_through_servers(const CommGroup& group, const std::set<int>& dead, Waits& waits) const {
  int on_servers = 0;
  for (const auto& [peer, waiters] : waits.waited_on)
    if (peer >= run_.world_size()) on_servers += waiters;
  if (on_servers == 0) return;
  for (int world : group.members())
    if (!dead.count(world) && detector_.activity(world).doing == RankActivity::Doing::computing)
      waits.waited_on[world] += on_servers;
}

// Transfers late by their pace (Detector::note_paced): over, but evidence as a late one
// under way is, each read once, in the group that saw it.
void Coordinator::read_paced(const CommGroup& group, const std::set<int>& dead, Waits& waits, Judgement& out) {
  for (int world : group.members()) {
    RankActivity::PacedLate& paced = detector_.activity(world).paced_late;
    if (paced.judged || dead.count(world) || paced.started <= rebuilt_at_) continue;
    paced.judged = true;
    waits.late.emplace_back(world, paced.peer);
    waits.late_since.push_back(paced.started + paced.expected);
    waits.late_started.push_back(paced.started);
    // Its slowdown is its bytes' (the route's latency set aside): what a slow link's
    // bandwidth did, which prices a regroup and becomes a kept link's norm.
    const double overall = (paced.ended - paced.started) / std::max(paced.expected, 1e-300);
    waits.late_slowdown.push_back(std::max(overall, paced.rate_slowdown));
    waits.late_into.push_back(paced.receive ? world : paced.peer);
    waits.late_by_rate.push_back(paced.by_rate);
    waits.late_flows.push_back(paced.receive ? std::pair{paced.peer, world} : std::pair{world, paced.peer});
    out.evidence.push_back(fmt::format("{} {} {} took {:.9g} s, x{:.3g} its expected {:.9g} s, its bytes x{:.3g} "
                                       "slower (late by its pace)",
                                       world, paced.receive ? "received from" : "sent to", paced.peer,
                                       paced.ended - paced.started, overall, paced.expected, paced.rate_slowdown));
  }
}

Judgement Coordinator::judge(bool second_look) {
  const CommGroup& group = membership_.current();
  const double now = engine_.now();
  Judgement out;
  window_ = 0;
  late_waiters_.clear();
  const std::set<int> dead = cut_off(group, out);
  Waits waits = read_waits(group, dead, now, out);
  out.broken = waits.broken;
  double slowest = 1;  // of the late computations
  const std::vector<int> busy_late = computing_late(group, dead, waits, now, out, slowest);
  if (judge_certain(dead, waits, out)) return out;
  // 2. Busy computing past its deadline while others wait on it: a straggler.
  if (!busy_late.empty()) {
    out.roots = busy_late;
    out.rule = "others wait on it and it computes past its deadline (a straggler)";
    out.compute_bound = out.pace_measured = true;
    out.slowdown = std::max(out.slowdown, slowest);
    return out;
  }
  // 2b. A computation over within its deadline, but at half its expected pace or slower.
  if (judge_slow_computations(group, dead, out)) return out;
  // 3. A progress score below the threshold for the window: a straggler.
  if (judge_progress(group.members(), out)) return out;
  // 4. Late or broken transfers: the rank common to all of them.
  if (!waits.late.empty()) judge_late_transfers(group, waits, second_look, out);
  return out;
}

// The members that others wait on and that compute past their deadline; `slowest`: the
// most any of them overran its expected time.
std::vector<int> Coordinator::computing_late(const CommGroup& group, const std::set<int>& dead, const Waits& waits,
                                             double now, Judgement& out, double& slowest) const {
  std::vector<int> busy_late;
  for (int world : group.members()) {
    const RankActivity& rank = detector_.activity(world);
    if (dead.count(world) || rank.doing != RankActivity::Doing::computing || !waits.waited_on.count(world)) continue;
    const double deadline = detector_.compute_deadline(rank);
    if (now >= deadline) {
      busy_late.push_back(world);
      slowest = std::max(slowest, std::max(1.0, (now - rank.since) / std::max(rank.expected_compute, 1e-300)));
      out.evidence.push_back(fmt::format("{} computes since {:.9g}, past its deadline {:.9g}", world, rank.since, deadline));
    }
  }
  return busy_late;
}

// 2b. The members whose computation, over within its deadline, ran at
//     recovery.straggler_threshold of its expected pace or slower (Detector::note_computed),
//     and at that of the group's median or slower (every host slower than expected makes
//     no straggler), each read once. A host 2x slower under "3x" passes no deadline, yet
//     its peers wait for it every round: a ring of 100 on torus:10x10 went on at 13.76 ms
//     a round against 8.72 ms with no recovery entry. Its slowdown is a pace (a whole
//     computation): dropping it or keeping it is priced (dropping_pays) and recorded
//     either way. False when there is none.
bool Coordinator::judge_slow_computations(const CommGroup& group, const std::set<int>& dead, Judgement& out) {
  std::vector<double> paces;
  for (int world : group.members())
    if (!dead.count(world)) paces.push_back(detector_.activity(world).compute_pace);
  if (paces.empty()) return false;
  const double median = median_of(paces);
  const double threshold = run_.scenario->recovery.straggler_threshold;
  double slowest = 1;
  for (int world : group.members()) {
    RankActivity::SlowComputation& slow = detector_.activity(world).slow_computation;
    if (slow.judged || dead.count(world)) continue;
    slow.judged = true;
    if (!at_most(slow.expected / slow.took, threshold * median)) continue;
    out.roots.push_back(world);
    slowest = std::max(slowest, slow.took / slow.expected);
    out.evidence.push_back(fmt::format("{} computed from {:.9g} for {:.9g} s, x{:.3g} its expected {:.9g} s, within "
                                       "its deadline (late by its pace; the group's median pace {:.3g})",
                                       world, slow.started, slow.took, slow.took / slow.expected, slow.expected, median));
  }
  if (out.roots.empty()) return false;
  out.rule = fmt::format("its computation ran at {:.3g} of its expected pace or slower, within its deadline "
                         "(a slow computation)", threshold);
  out.compute_bound = out.compute_over = out.pace_measured = true;
  out.slowdown = slowest;
  return true;
}

// Rules 1, 1b and 1c: what is certain. True when one of them decided.
bool Coordinator::judge_certain(const std::set<int>& dead, const Waits& waits, Judgement& out) {
  const std::set<int>& ports_down = waits.ports_down;
  // 1. Dead or cut off: certain.
  if (!dead.empty()) {
    std::set<int> roots = dead;
    roots.insert(ports_down.begin(), ports_down.end());
    out.roots.assign(roots.begin(), roots.end());
    // A switch link is no rank's: the coordinator's side is cut off with it, not by its own link.
    out.rule = !out.coordinator_cut ? "dead or cut off from the coordinator"
               : own_links_switch_  ? "the coordinator's way to most of the group crosses switch links that are down, "
                                      "which no rank owns: its side is cut off with it"
                                    : "its host's link is down, and the coordinator shares its host";
    out.certain = true;
    for (int world : dead) out.evidence.push_back(fmt::format("{} does not answer heartbeats", world));
    return true;
  }
  // 1b. A transfer broke on a member's own link (a GPU's NIC on rail:N:G, whose NVLink
  //     still reaches the coordinator): the host's own monitor sees the link down. Certain.
  if (!ports_down.empty()) {
    out.roots.assign(ports_down.begin(), ports_down.end());
    out.rule = "a transfer broke on its own link, which is down";
    out.certain = true;
    return true;
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
    return true;
  }
  return false;
}

// 4. Late or broken transfers: the rank common to all of them. With one late transfer
//    only, an end that completed a transfer with someone else on time since is cleared.
void Coordinator::judge_late_transfers(const CommGroup& group, Waits& waits, bool second_look, Judgement& out) {
  std::vector<std::pair<int, int>>& late = waits.late;
  // Late transfers seen in earlier windows of this epoch still count: a slow rank meets
  // a new partner at each step (recursive doubling), and only together do they single it out.
  // A transfer is one piece of evidence, seen late from both its ends or from one.
  for (size_t i = 0; i < late.size(); ++i) {
    const auto [a, b] = late[i];
    const auto [seen, added] = late_seen_.try_emplace(
        {std::min(a, b), std::max(a, b)},
        LateSeen{waits.late_since[i], false, false, waits.late_started[i], 1, waits.late_by_rate[i]});
    if (!added) {
      seen->second.since = std::min(seen->second.since, waits.late_since[i]);
      seen->second.began = std::min(seen->second.began, waits.late_started[i]);
      seen->second.by_rate = seen->second.by_rate && waits.late_by_rate[i];
    }
    seen->second.slowdown = std::max(seen->second.slowdown, waits.late_slowdown[i]);
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
  if (judge_link_slow_both_ways(waits, out)) return;
  // 4f. A switch link that every late transfer crosses: the fabric's, not a rank's (one
  // late transfer is thin evidence: a second window first, or the same pair left
  // undecided by an earlier window of this epoch. A ring across a dragonfly link at 20%
  // has one late transfer a step, each over before the second look: undecided at every
  // round, nothing regrouped, rounds 3.8x slower.)
  const bool again = late.size() == 1 && undecided_before({std::min(late[0].first, late[0].second),
                                                           std::max(late[0].first, late[0].second)});
  // Transfers late only by their bytes' rate (within 3x in all) are evidence of a link: the
  // fabric's rule reads them; a rank's own slowness is the progress score's to judge, over
  // its window (lab 4's NIC at 0.4: dropped by its score, as before the rate was read).
  const bool by_rate = std::all_of(late_seen_.begin(), late_seen_.end(), [](const auto& seen) { return seen.second.by_rate; });
  if ((late.size() > 1 || second_look || again || by_rate) && judge_fabric(waits, second_look || again, out)) return;
  if (by_rate) {
    late_seen_.clear();  // no switch link explains them: nothing to judge, start afresh
    return;
  }
  if (common.size() == 1 && late.size() == 1 && !second_look) {
    // One late transfer is thin evidence (a link shared more than the expected times
    // see): undecided until a second window shows whether it stays late.
    for (const auto& [world, peers] : partners) out.ambiguous.push_back(world);
    out.rule = "one late transfer only";
    return;
  }
  if (common.size() == 1 && judge_dropped_link(common.front(), late, waits, out)) return;
  if (common.size() == 1 && judge_transit_link(common.front(), late, waits, out)) return;
  if (common.size() == 1) {
    out.roots = common;
    out.rule = late.size() > 1 ? "every late or broken transfer involves it"
                               : "its one late transfer's other end made progress on time";
    add_scores(group.members(), out);
    note_median_slowdown(common.front(), out);
    return;
  }
  if (common.empty() && judge_link(late, group.members(), waits, out)) return;
  // Late transfers with no rank in common: two candidates are undecided; more, spread
  // over the group, are congestion (the expected times do not see every shared link).
  if (partners.size() == 2 || failures_) {
    for (const auto& [world, peers] : partners) out.ambiguous.push_back(world);
    out.rule = "the late transfers do not single out one rank";
  } else {
    late_seen_.clear();  // congestion says nothing about a culprit: start afresh
  }
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
void Coordinator::note_median_slowdown(int common, Judgement& out) const {
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
std::vector<double> Coordinator::note_late_slowdowns(Judgement& out, int common) const {
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
//     behind it, the smaller side of the cut it makes (model/link_sides.hpp). Dropping only
//     the ranks seen crossing it would leave the next ones (a ring's new neighbours, a
//     node's new leader) to cross it in the rebuilt group.
bool Coordinator::judge_link(const std::vector<std::pair<int, int>>& late, const std::vector<int>& members, const Waits& waits,
                             Judgement& out) {
  if (late.size() < 2) return false;
  const Network& routes = run_.network();
  const std::vector<std::string_view> shared = links_crossed_by_all(late);
  // The link that cuts off the fewest members; two that cut off as many (a pair of
  // nodes exchanging across both NICs) leave the evidence undecided until more comes.
  std::vector<std::pair<std::string_view, std::vector<int>>> cuts;
  for (std::string_view link : shared)
    if (std::vector<int> side = link_owners(routes, members, link); !side.empty()) cuts.emplace_back(link, std::move(side));
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
bool Coordinator::judge_uncut_link(std::vector<std::string_view> shared, const std::vector<int>& members, const Waits& waits,
                                   Judgement& out) {
  if (shared.empty()) return false;
  if (!waits.late_flows.empty()) {
    const Network& routes = run_.network();
    std::vector<std::string_view> by_data = links_crossed_by_all(waits.late_flows);
    std::erase_if(by_data, [&](std::string_view link) { return !link_owners(routes, members, link).empty(); });
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
bool Coordinator::judge_link_slow_both_ways(const Waits& waits, Judgement& out) {
  if (waits.late_flows.empty() || avoided_halves_.empty() || !waits.broken.empty()) return false;
  auto avoided = [&](int id) {
    return std::find(avoided_halves_.begin(), avoided_halves_.end(), id) != avoided_halves_.end();
  };
  std::vector<std::string_view> slow;  // the physical links of the halves avoided as slow (up)
  for (int half : avoided_halves_)
    if (engine_.link_up(half)) slow.push_back(physical(half));
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
std::vector<std::string_view> Coordinator::links_crossed_by_all(const std::vector<std::pair<int, int>>& late) const {
  const Network& routes = run_.network();
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
bool Coordinator::judge_transit_link(int common, const std::vector<std::pair<int, int>>& late, const Waits& waits, Judgement& out) {
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

// The ranks whose progress score stayed below recovery.straggler_threshold x the group's
// median for recovery.straggler_window steps. One whose slow transfers were all with
// other such ranks was slowed by them (a tree's leaf under a slow parent): not a root.
// False when no rank is a straggler.
bool Coordinator::judge_progress(const std::vector<int>& members, Judgement& out) const {
  const std::vector<int> flagged = detector_.stragglers(members);
  if (flagged.empty()) return false;
  const auto is_flagged = [&](int world) { return std::find(flagged.begin(), flagged.end(), world) != flagged.end(); };
  const RecoverySpec& recovery = run_.scenario->recovery;
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
void Coordinator::add_scores(const std::vector<int>& members, Judgement& out) const {
  out.median = detector_.median_score(members);
  for (int world : out.roots)
    if (const double mine = detector_.score(world); mine >= 0) out.scores.emplace_back(world, mine);
}

}  // namespace collsim::coordination
