// The coordinator's probes settle a pair that the evidence cannot separate (rules 5b and 5c).
#include "recovery/coordinator_impl.hpp"

namespace collsim::coordination {

namespace {

// A probe carries at least this much (recovery/link_probe.hpp): enough for a link's bandwidth,
// not only its latency, to show in its time.
constexpr double probe_min_bytes = 1 << 20;

}  // namespace

// 5b. A pair undecided again, in a later window, with one late transfer from s to r
//     (recovery/link_probe.hpp): s's own link and r's on the route between them (one that cuts
//     the fewest members off, or that carries that end's transfers only) are each
//     measured by a probe of the late transfer's size through a witness, a member on
//     neither side. The one probe past its deadline names the members behind its link;
//     both or neither: still undecided (a torus link carries others' transfers in
//     transit: no end owns it, no probe).
void Coordinator::settle_by_probes(Judgement& out) {
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
bool Coordinator::regroup_around(int sender, int receiver, double slowdown, Judgement& out) {
  if (!still_runs(sender) || !still_runs(receiver)) return false;
  const std::vector<std::string_view> route = physical_links(run_.network(), sender, receiver);
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
void Coordinator::settle_slow_pair(int sender, int receiver) {
  const std::vector<int>& members = membership_.current().members();
  for (int world : {sender, receiver})
    if (world < 0 || std::find(members.begin(), members.end(), world) == members.end() || !still_runs(world)) return;
  // Probes cost traffic: none when keeping does more useful work even if one end were the
  // slow one (recorded, once: a keep).
  Judgement judgement;
  judgement.roots = {receiver};
  judgement.slowdown = 1 / std::max(detector_.activity(receiver).slow_pace, 1e-9);
  judgement.rule = fmt::format("{}'s receives from {} ran below {:.3g} of their earlier pace {} times in a row, within "
                               "their deadlines", receiver, sender, run_.scenario->recovery.straggler_threshold,
                               run_.scenario->recovery.straggler_window);
  const Prediction p = predict(judgement);
  judgement.prices = decision_prices(run_, p.remaining);
  add_choice(judgement.prices, "keep", p.keep, static_cast<int>(members.size()));
  add_choice(judgement.prices, "drop", p.drop, static_cast<int>(members.size()) - 1);
  if (choose(judgement.prices) == "keep") {
    prediction_ = {p.keep, p.drop};
    keep_recorded(judgement, "keeping does more useful work than a rebuild even if it is the slow end: not probed");
    prediction_ = {-1, -1};
    return;
  }
  judgement = Judgement{};
  if (!probe_pair(sender, receiver, detector_.activity(receiver).bytes, judgement)) return;
  judgement.rule = fmt::format("{}'s receives from {} ran below {:.3g} of their earlier pace {} times in a row, within "
                               "their deadlines; {}",
                               receiver, sender, run_.scenario->recovery.straggler_threshold,
                               run_.scenario->recovery.straggler_window, judgement.rule);
  if (!dropping_pays(judgement)) return;
  rebuild(judgement);
}

std::optional<Coordinator::Probed> Coordinator::run_probes(const std::vector<std::pair<int, int>>& ways, const std::vector<std::string>& across,
                                                           double bytes, Judgement& out) {
  bytes = std::max(bytes, probe_min_bytes);
  Probed probed;
  for (size_t i = 0; i < ways.size(); ++i) {
    const auto [from, to] = ways[i];
    if (!engine_.host_up(from) || !engine_.host_up(to)) return std::nullopt;
    const double expected = detector_.expected_transfer(from, to, bytes);
    const ProbeOutcome probe = engine_.probe(from, to, bytes, expected, detector_.limit(expected));
    probed.outcomes.push_back(probe);
    out.evidence.push_back(fmt::format("probe {} -> {} across {}: {} after {:.9g} s (expected {:.9g} s)", from, to,
                                       across[i], probe.late ? "not over" : "over", probe.took, probe.expected));
  }
  for (auto [from, to] : ways)
    if (!still_runs(from) || !still_runs(to) || !engine_.host_up(from) ||
        !engine_.host_up(to))
      return std::nullopt;
  const double threshold = run_.scenario->recovery.straggler_threshold;
  for (const ProbeOutcome& probe : probed.outcomes) probed.slow.push_back(probe.late || probe_pace(probe) < threshold);
  return probed;
}

double Coordinator::probe_pace(const ProbeOutcome& probe) {
  return probe.took > 0 ? std::min(1.0, probe.expected / probe.took) : 1.0;
}

// Probes `sender`'s own link and `receiver`'s on the route between them, each through a
// witness, with `bytes` (at least probe_min_bytes). True when exactly one was late: `out`
// then has its side as roots, the rule's probe clause, the probes in evidence, and the
// late probe's slowdown (a lower bound: it was cut at its deadline). Once per pair and
// group: probes that settled nothing would settle nothing again.
bool Coordinator::probe_pair(int sender, int receiver, double bytes, Judgement& out) {
  if (!probed_.insert({membership_.current().epoch(), sender, receiver}).second) return false;
  const std::vector<int>& members = membership_.current().members();
  const Network& routes = run_.network();
  const std::optional<OwnLink> out_link = own_link(routes, members, sender, receiver, sender);
  const std::optional<OwnLink> in_link = own_link(routes, members, sender, receiver, receiver);
  if (!out_link || !in_link) return false;
  // Each probe crosses its end's own link and no other link of the late route.
  const std::vector<std::string_view> late_route = physical_links(routes, sender, receiver);
  const std::optional<int> to_witness = witness(routes, members, sender, *out_link, in_link->side, late_route);
  const std::optional<int> from_witness = witness(routes, members, receiver, *in_link, out_link->side, late_route);
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
bool Coordinator::probe_halves(int sender, int receiver, double bytes, Judgement& out) {
  if (!halves_probed_.insert({membership_.current().epoch(), sender, receiver}).second) return false;
  const Network& routes = run_.network();
  const std::vector<int> late = routes.route(sender, receiver).links;  // (a copy: other routes are read meanwhile)
  if (late.empty() || !between_ranks(sender, late.front()) || !between_ranks(receiver, late.back())) return false;
  const std::vector<int>& members = membership_.current().members();
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
int Coordinator::member_next_door(int end, int half, bool into) const {
  for (auto [peer, way] : next_door(run_.network(), membership_.current().members(), end, into))
    if (way == half) return peer;
  return -1;
}

}  // namespace collsim::coordination
