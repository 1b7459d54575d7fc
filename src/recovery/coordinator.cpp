// The coordinator's protocol: reports in, verdicts out, the rebuild and the rejoin. How it
// reads the evidence: coordinator_links.cpp, coordinator_judge.cpp, coordinator_regroup.cpp,
// coordinator_probes.cpp.
#include "recovery/coordinator_impl.hpp"

namespace collsim::coordination {

// One report, in the order they came (the engine's adapter reads them: sim/recovery_adapter.cpp).
// No timer of its own: a timed wait is a sleep on the control host's CPU, which would
// disturb the computation of a worker there. The waiting workers wake it up.
void Coordinator::on_report(const Report& report) {
  // Even once the run stops: its verdicts (leave) must still reach the workers.
  if (report.kind == Report::Kind::undelivered) {
    resend(report.world);
    return;
  }
  if (membership_.gave_up()) return;
  if (report.kind == Report::Kind::server_lost) {
    lose_servers(report);
    return;
  }
  if (report.kind == Report::Kind::join) {
    admit(report.world);
    return;
  }
  if (report.kind == Report::Kind::failure) {
    if (!in_this_epoch(report)) return;
    failures_ = true;
  }
  // A transfer of an abandoned group, late by its pace, says nothing of the new one (nor
  // does a computation begun before the rebuild: its round's collective was redone since).
  const bool paced = report.kind == Report::Kind::slow_transfer || report.kind == Report::Kind::slow_computation;
  if (paced && report.since <= rebuilt_at_) return;
  if (report.kind == Report::Kind::slow_pair) {
    settle_slow_pair(report.peer, report.world);
    return;
  }
  decide();
  if (!membership_.gave_up()) give_up_if_stalled();
}

// A failure read after the rebuild that abandoned its epoch (the rank dropped for a link
// down for good reports its own broken transfer with the peer that reported first) is no
// evidence for the new one: it once made a later doubt between two members "a transfer
// failed", and the run stopped (a double binary tree on leaf-spine:4:16, rank 29's link
// down for good, then rank 22's NIC at 1%). A new epoch's transfers start after its
// verdicts cross: strictly after the rebuild.
bool Coordinator::in_this_epoch(const Report& report) const {
  const std::vector<int>& members = membership_.current().members();
  // (a parameter server's process is no member, and serves the current group)
  const bool server = report.world >= run_.world_size();
  return report.since > rebuilt_at_ &&
         (server || std::find(members.begin(), members.end(), report.world) != members.end());
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
  const CommGroup& group = membership_.current();
  if (stall_limit_ < 0) {
    const double whole = run_.scenario->training.rounds * (compute_seconds(run_) + healthy_model(group));
    stall_limit_ = std::max(detector_.limit(whole), 3 * whole);
  }
  const double now = engine_.now();
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
  const double now = engine_.now();
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

// Late transfers explained by slow links that no drop takes off their routes, and no order
// that keeps off them (judgement.slow_links, no order): recorded, nobody dropped; true then.
// Transfers that broke on a link down read as late ones across it: the link is down, not
// slow, and the collective cannot finish across it (Rabenseifner on torus:4x4x4 with the
// link 21-25 down for good waited until the run's end): rule 1d first (false: decide goes on).
bool Coordinator::slow_links_only(Judgement& judgement) {
  if (judgement.slow_links.empty() || !judgement.order.empty()) return false;
  const std::vector<LinkRef> down = failures_ ? links_down_under(judgement.broken) : std::vector<LinkRef>{};
  if (down.empty()) {
    // Switch links kept: their measured pace is their norm from now on (the detector's
    // expected times), so that their transfers are not late again and again, each
    // report judging the same evidence (a ring of 256 on a fat tree with a leaf's link
    // to a top switch at 1%: 37.7 s of CPU for 2 rounds against 1.3 s under `none`).
    for (int half : judgement.fabric_halves)
      detector_.pace_link(half, run_.network().link(half).bandwidth / (kept_margin * judgement.fabric_slowdown));
    record_slow_links(judgement);
    return true;
  }
  judgement.slow_links.clear();
  return !around_links_down(judgement, down);
}

// Reads the group's waits and acts.
void Coordinator::decide() {
  Judgement judgement = judge();
  if (slow_links_only(judgement)) return;
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
    engine_.sleep(second_window);
    judgement = judge(true);
    if (!judgement.fabric_halves.empty() && slow_links_only(judgement)) return;  // the fabric, everyone kept
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
        stop_run(judgement, membership_.current().members(),
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
  if (judgement.certain) {
    detour_certain(judgement);
  } else if (!dropping_pays(judgement)) {
    return;
  }
  if (judgement.coordinator_cut && !await_own_link(judgement)) return;
  rebuild(judgement);
}

// The lowest round a member is in (a joiner still waiting for the model is in none).
int Coordinator::lowest_round(const CommGroup& group, const std::vector<int>& dropped) const {
  int round = std::numeric_limits<int>::max();
  for (int world : members_without(group.members(), dropped))
    if (!membership_.awaiting_model(world)) round = std::min(round, detector_.activity(world).round);
  return round == std::numeric_limits<int>::max() ? 0 : round;
}

RecoveryEvent Coordinator::event_for(const CommGroup& group, const Judgement& judgement) const {
  RecoveryEvent event;
  const double now = engine_.now();
  event.epoch_before = group.epoch();
  event.detected = first_suspicion(group, judgement);
  event.fault_time = fault_time(judgement, event.detected);
  event.rebuilt = now;
  event.rule = judgement.rule;
  event.evidence = judgement.evidence_lines();
  event.prediction_keep = prediction_.first;
  event.prediction_drop = prediction_.second;
  event.prices = judgement.prices;
  // Layered training: the earliest bucket a member was reducing is the one redone first.
  for (int world : group.members()) {
    const int bucket = engine_.bucket(world);
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
  for (const FaultEvent& fault : faults_) {
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
    double first = engine_.now();
    for (int world : group.members()) {
      const RankActivity& rank = detector_.activity(world);
      if (rank.doing == RankActivity::Doing::failed && judged.count(rank.peer)) first = std::min(first, rank.since);
    }
    return first;
  }
  auto symptom = [&](int world) {
    return judged.count(detector_.activity(world).peer) ||
           (judged.count(world) && still_runs(world) && engine_.host_up(world));
  };
  const double now = engine_.now();
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
  const double now = engine_.now();
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
  const CommGroup& group = membership_.current();
  if (group.epoch() == last_slow_links_.first && judgement.slow_links == last_slow_links_.second) return;
  last_slow_links_ = {group.epoch(), judgement.slow_links};
  RecoveryEvent event = event_for(group, judgement);
  event.epoch_after = group.epoch();
  event.round = lowest_round(group, {});
  event.group = group.members();
  event.reason = judgement.rule;
  decisions_.push_back(event);
}

void Coordinator::record_undecided(const Judgement& judgement, double window) {
  const CommGroup& group = membership_.current();
  // the same doubt in this epoch: already in the trace
  if (!undecided_.emplace(group.epoch(), judgement.ambiguous).second) return;
  RecoveryEvent event = event_for(group, judgement);
  event.epoch_after = group.epoch();
  event.round = lowest_round(group, {});
  event.group = group.members();
  event.undecided_ranks = judgement.ambiguous;
  event.reason = fmt::format("undecided between ranks {}: {}; nobody dropped, judged again after {:.9g} s",
                             fmt::join(judgement.ambiguous, ", "), judgement.rule, window);
  decisions_.push_back(event);
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
      rank.transfer = TransferRef{};
    }
  }
  const double start_at = start_line(group, dropped, postponed);
  for (int world : group.members()) {
    RankActivity& rank = detector_.activity(world);
    // Only a worker still in the run hears it: a verdict nobody reads would stay in the
    // mailbox and be taken by the next worker on that rank (one whose host came back
    // asks to rejoin and waits for that answer, not for this one).
    const WorkerFate fate = engine_.fate(world);
    if (!engine_.host_up(world) || (fate != WorkerFate::running && !admitted(world)))
      continue;
    // A postponed joiner's answer is its admission at a later round (rebuild).
    if (std::find(postponed.begin(), postponed.end(), world) != postponed.end()) continue;
    send(world, Verdict{rank.dropped, rank.dropped ? nullptr : next, resume_round, false, start_at});
    // One done with the last round, waiting for the others, reads it now.
    engine_.wake_waiting(world);
  }
}

// Verdicts queue in the worker's mailbox, in order; the worker acts on the last one only
// (a group rebuilt twice before it read the first).
void Coordinator::send(int world, Verdict verdict) { engine_.send_verdict(world, std::move(verdict)); }

// `world`'s last verdict did not cross (a link on its way went down): a resender on the
// control host sends it again once the way is up, checking at doubling intervals for up
// to link_patience(), as for the coordinator's own link; then it gives up (the worker,
// waiting twice as long, is cut off and leaves). Nothing is sent when the worker has
// read a later verdict meanwhile, or is gone (its host down, or a new worker there).
void Coordinator::resend(int world) {
  const double patience = link_patience();
  const int incarnation = engine_.incarnation(world);
  // It runs until the simulation ends, like the coordinator: `this` outlives it.
  engine_.beside([this, world, incarnation, patience] {
    double waited = 0, step = detector_.limit(0);
    while (engine_.verdict_lost(world) && engine_.incarnation(world) == incarnation && engine_.host_up(world)) {
      if (way_up(world)) {
        engine_.resend_verdict(world);
        return;
      }
      if (waited >= patience) {
        lost_contact();
        return;
      }
      const double pause = std::min(step, patience - waited);
      engine_.sleep(pause);
      waited += pause;
      step *= 2;
    }
  });
}

// Whether a verdict can reach `world` now: the links between the control host and its
// host are up, or a courier can carry it.
bool Coordinator::way_up(int world) {
  if (run_.on_control_host(world)) return engine_.courier_available(world);
  const std::vector<LinkRef>& links = heartbeat_route(world);
  return std::all_of(links.begin(), links.end(), [&](LinkRef link) { return engine_.link_up(link); }) ||
         engine_.courier_available(world);
}

void Coordinator::release_everyone() {
  const CommGroup& group = membership_.current();
  deliver(group, group.members(), nullptr, 0);
}

void Coordinator::rebuild(const Judgement& judgement) {
  const CommGroup& group = membership_.current();
  std::vector<int> survivors = judgement.order.empty() ? members_without(group.members(), judgement.roots) : judgement.order;
  const int min_workers = run_.scenario->recovery.min_workers;
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
  auto next = engine_.new_group(group.epoch() + 1, survivors);
  RecoveryEvent event = event_for(group, judgement);
  event.epoch_after = next->epoch();
  event.round = resume_round;
  event.dropped_ranks = judgement.roots;
  event.kept_ranks = judgement.kept;
  for (int world : judgement.roots) event.dropped_hosts.push_back(run_.rank_hosts[static_cast<size_t>(world)]);
  event.group = survivors;
  event.postponed_ranks = postponed;
  event.reason = judgement.rule + kept_off;
  decisions_.push_back(event);
  membership_.rebuild(next);
  deliver(group, judgement.roots, next, resume_round, postponed);
  engine_.regrouped(next, resume_round);
  failures_ = false;
  rebuilt_at_ = engine_.now();
  note_dropped_links(judgement);
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
  for (const Membership::Joiner& joiner : membership_.joiners()) {
    if (std::find(roots.begin(), roots.end(), joiner.world) != roots.end()) continue;
    if (!joiner.has_model || joiner.round > resume_round) postponed.push_back(joiner.world);
  }
  std::sort(postponed.begin(), postponed.end());
  return postponed;
}

// A returning worker joins at the next round that no worker has started yet, so that
// every member switches group at the same round boundary.
void Coordinator::admit(int world) {
  const CommGroup& group = membership_.current();
  // Back before anyone noticed it was gone: it joins once the rebuild has dropped it.
  if (std::find(group.members().begin(), group.members().end(), world) != group.members().end()) {
    waiting_joins_.push_back(world);
    return;
  }
  detector_.activity(world) = RankActivity{};  // a new worker: nothing of the one that was killed
  admit_at(world, membership_.next_unstarted_round(), false);
}

// Admits `world` at `round` (again, when a rebuild postponed it).
void Coordinator::admit_at(int world, int round, bool again) {
  const CommGroup& group = membership_.current();
  if (round >= run_.scenario->training.rounds) {
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
  auto next = engine_.new_group(group.epoch() + 1, members);
  membership_.admit(round, world, next);

  RecoveryEvent event;
  event.epoch_before = group.epoch();
  event.epoch_after = next->epoch();
  event.round = round;
  event.detected = event.rebuilt = engine_.now();
  event.joined_ranks = {world};
  event.group = members;
  event.reason = again ? fmt::format("rank {} rejoins at round {} (postponed by the rebuild)", world, round)
                       : fmt::format("rank {} came back and rejoins at round {}", world, round);
  if (!halves.empty())
    event.reason += fmt::format(", at group rank {}, in an order that keeps off {}",
                                std::find(members.begin(), members.end(), world) - members.begin(), links_kept_off());
  event.rule = "join";
  decisions_.push_back(event);
  send(world, Verdict{false, next, round, true});
}

bool Coordinator::undecided_before(const std::vector<int>& ranks) const {
  return undecided_.count({membership_.current().epoch(), ranks}) > 0;
}

}  // namespace collsim::coordination

namespace collsim {

RecoveryCoordinator::RecoveryCoordinator(const RunFacts& run, Membership& membership, Detector& detector,
                                         EnginePort& engine, std::vector<RecoveryEvent>& decisions,
                                         const std::vector<FaultEvent>& faults)
    : impl_(std::make_unique<coordination::Coordinator>(run, membership, detector, engine, decisions, faults)) {}

RecoveryCoordinator::~RecoveryCoordinator() = default;

void RecoveryCoordinator::on_report(const Report& report) { impl_->on_report(report); }

double RecoveryCoordinator::link_patience() const { return impl_->link_patience(); }

}  // namespace collsim
