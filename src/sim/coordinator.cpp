// The coordinator's protocol: reports in, verdicts out, the rebuild and the rejoin. How it
// reads the evidence: coordinator_links.cpp, coordinator_judge.cpp, coordinator_regroup.cpp,
// coordinator_probes.cpp.
#include "sim/coordinator_impl.hpp"

namespace collsim::coordination {

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

}  // namespace

void Coordinator::run() {
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

// A failure read after the rebuild that abandoned its epoch (the rank dropped for a link
// down for good reports its own broken transfer with the peer that reported first) is no
// evidence for the new one: it once made a later doubt between two members "a transfer
// failed", and the run stopped (a double binary tree on leaf-spine:4:16, rank 29's link
// down for good, then rank 22's NIC at 1%). A new epoch's transfers start after its
// verdicts cross: strictly after the rebuild.
bool Coordinator::in_this_epoch(const Report& report) const {
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
void Coordinator::give_up_if_stalled() {
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
bool Coordinator::under_way(int world) const {
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
void Coordinator::decide() {
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

// The control host's own link (own_links_) stayed down past link_patience(): the run
// stops, saying why (and whom it would have dropped: the ranks it cuts off with the
// coordinator; none behind an idle control host's link).
void Coordinator::stop_cut_off(const Judgement& judgement, const CommGroup& group) {
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
void Coordinator::lost_contact() {
  if (state_.membership.gave_up()) return;
  const Judgement judgement = judge();
  if (judgement.coordinator_cut) stop_cut_off(judgement, state_.membership.current());
}

// The run stops (a rebuild below recovery.min_workers, the coordinator cut off, a failure
// the evidence cannot attribute, a stall past the whole run): the trace says why and who
// was left (`left`); everyone is told to leave.
void Coordinator::stop_run(const Judgement& judgement, const std::vector<int>& left, std::string reason) {
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

// The lowest round a member is in (a joiner still waiting for the model is in none).
int Coordinator::lowest_round(const CommGroup& group, const std::vector<int>& dropped) const {
  int round = std::numeric_limits<int>::max();
  for (int world : members_without(group.members(), dropped))
    if (!state_.membership.awaiting_model(world)) round = std::min(round, detector_.activity(world).round);
  return round == std::numeric_limits<int>::max() ? 0 : round;
}

RecoveryEvent Coordinator::event_for(const CommGroup& group, const Judgement& judgement) const {
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
double Coordinator::fault_time(const Judgement& judgement, double detected) const {
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
double Coordinator::first_suspicion(const CommGroup& group, const Judgement& judgement) const {
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
double Coordinator::suspicious_since(int world) const {
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
void Coordinator::record_slow_links(const Judgement& judgement) {
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

void Coordinator::record_undecided(const Judgement& judgement, double window) {
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
void Coordinator::deliver(const CommGroup& group, const std::vector<int>& dropped, const std::shared_ptr<CommGroup>& next,
                          int resume_round, const std::vector<int>& postponed) {
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
void Coordinator::send(int world, Verdict verdict) {
  Verdict* letter = detector_.letter(std::move(verdict));
  detector_.verdict_sent(world, letter);
  tell(state_, detector_, world, letter);
}

// `world`'s last verdict did not cross (a link on its way went down): a resender on the
// control host sends it again once the way is up, checking at doubling intervals for up
// to link_patience(), as for the coordinator's own link; then it gives up (the worker,
// waiting twice as long, is cut off and leaves). Nothing is sent when the worker has
// read a later verdict meanwhile, or is gone (its host down, or a new worker there).
void Coordinator::resend(int world) {
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
bool Coordinator::way_up(int world) {
  if (on_control_host(state_, world)) return courier_for(state_, world) >= 0;
  const std::vector<const sg4::Link*>& links = heartbeat_route(world);
  return std::all_of(links.begin(), links.end(), [](const sg4::Link* link) { return link->is_on(); });
}

void Coordinator::release_everyone() {
  const CommGroup& group = state_.membership.current();
  deliver(group, group.members(), nullptr, 0);
}

void Coordinator::rebuild(const Judgement& judgement) {
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
std::vector<int> Coordinator::postponed_joiners(const std::vector<int>& roots, int resume_round) const {
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
void Coordinator::admit(int world) {
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
void Coordinator::admit_at(int world, int round, bool again) {
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

bool Coordinator::undecided_before(const std::vector<int>& ranks) const {
  return undecided_.count({state_.membership.current().epoch(), ranks}) > 0;
}

}  // namespace collsim::coordination

namespace collsim {

void start_coordinator(RunState& state, Detector& detector) {
  auto run = [shared = state.shared_from_this(), &detector] { coordination::Coordinator(*shared, detector).run(); };
  simgrid::s4u::ActorPtr actor = simgrid::s4u::Actor::create("coordinator", state.setup.control_host, run);
  actor->daemonize();  // it waits for reports forever; the run ends with the workers
}

}  // namespace collsim
