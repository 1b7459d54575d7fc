#include "recovery/detector.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "comm/message_cost.hpp"
#include "model/network.hpp"

namespace collsim {

Detector::Detector(const RunFacts& run, const Membership& membership, EnginePort& engine)
    : run_(run), membership_(membership), engine_(engine), ranks_(static_cast<size_t>(run.endpoints())) {
  // The network model's own corrections (realistic: TCP's latency and bandwidth factors,
  // the window that caps a route's rate), so that expected times are those SimGrid gives.
  last_routes_.resize(static_cast<size_t>(run.endpoints()));
  latency_factor_ = run.solver.latency_factor;
  bandwidth_factor_ = run.solver.bandwidth_factor;
  tcp_gamma_ = run.solver.tcp_gamma;
  if (run.solver.cross_traffic) cross_traffic_ = reverse_flow_weight;
  weight_s_ = run.solver.weight_s;
  // At each time step SimGrid ends the transfers (and latency phases) due within
  // surf/precision (collsim's 1 ps) after it: a check that fires just before a transfer's
  // end ends it early, and a healthy run no longer takes the time of `none` to the last
  // digit.
  // Checks do fire in healthy runs (a tree's leaf waits for the whole pipeline), and a
  // deadline is a multiple of an expected time, as a pipeline's ends are: the leaf's
  // deadline of 3 segments falls on the third segment's end, up to rounding. So each
  // check comes a few precisions after its deadline. (A check meeting another transfer's
  // end by chance is what made collsim set surf/precision to 1 ps instead of SimGrid's
  // 1 ns: at 1 ns, 2 of 520 fault-free runs moved, docs/recovery.md.)
  check_margin_ = 3 * run.solver.precision;
  // The least limit of a computation or of the coordinator's windows: a few of the longest
  // partner route's latencies (a wait's is its own route's, floor_of).
  min_timeout_ = run.scenario->recovery.min_timeout.value_or(5 * run.model.alpha * latency_factor_);
}

Detector::~Detector() = default;

// The ends' own links are shared by the transfers each end has posted (counted on both
// sides, by the end's link they cross); every link of a route by the transfers under way
// across it, both sides posted (and, with cross-traffic, by their reverse flows on the
// links of the route back), each at its weight in SimGrid's sharing. A send waiting for its
// receive is no flow yet: counted, the sends piling up toward a slow rank would excuse its
// own slowness.
void Detector::posted(int world, int peer, bool receive) {
  settle();
  Route& path = receive ? route(peer, world) : route(world, peer);
  count_end(activity(world), path, receive, +1);
  ++(receive ? path.receives : path.sends);
  under_way(path);
}

void Detector::finished(int world, int peer, bool receive) {
  settle();
  Route& path = receive ? route(peer, world) : route(world, peer);
  count_end(activity(world), path, receive, -1);
  int& posted = receive ? path.receives : path.sends;
  posted = std::max(0, posted - 1);
  under_way(path);
}

RankActivity::EndLink& Detector::end_link(RankActivity& rank, int link) {
  for (RankActivity::EndLink& end : rank.end_links)
    if (end.link == link) return end;
  return rank.end_links.emplace_back(RankActivity::EndLink{link});
}

// A rank's transfer on `path` leaves by the route's first link (a send) or enters by its
// last (a receive); its reverse flow crosses the rank's end of the route back.
void Detector::count_end(RankActivity& rank, const Route& path, bool receive, int change) {
  const int own = path.links.empty() ? -1 : (receive ? path.links.back() : path.links.front());
  RankActivity::EndLink& end = end_link(rank, own);
  int& count = receive ? end.in : end.out;
  count = std::max(0, count + change);
  ++load_version_;
  if (cross_traffic_ <= 0 || path.back_links.empty()) return;
  RankActivity::EndLink& back = end_link(rank, receive ? path.back_links.front() : path.back_links.back());
  back.reverse = std::max(0, back.reverse + change);
}

// The pair's transfers under way are those matched, sends and receives in flight in
// pairs (a mailbox matches them in order); the links' loads follow their count.
void Detector::under_way(Route& path) {
  const int now = std::min(path.sends, path.receives);
  if (now == path.under_way) return;
  const double weight = (now - path.under_way) / path.penalty;
  path.under_way = now;
  ++load_version_;
  for (int link : path.links) links_[static_cast<size_t>(link)].load += weight;
  if (cross_traffic_ > 0)
    for (int link : path.back_links) links_[static_cast<size_t>(link)].load += cross_traffic_ * weight;
}

// Routes come from the run's route cache (the one reader of SimGrid's routes), with the
// links' latency and bandwidth as built, before any fault: a fault must not become the norm
// that its own transfers are measured against.
Detector::Route& Detector::find_route(int src, int dst) {
  auto [it, inserted] = routes_.try_emplace((static_cast<uint64_t>(src) << 32) | static_cast<uint32_t>(dst));
  if (inserted) {
    Route& path = it->second;
    const Network& routes = run_.network();
    const std::vector<int>& links = routes.route(src, dst).links;
    path.bandwidth = std::numeric_limits<double>::infinity();
    for (int id : links) {
      const NetworkLink& link = routes.link(id);
      path.latency += link.latency;
      path.bandwidth = std::min(path.bandwidth, link.bandwidth);
    }
    // SimGrid's sharing penalty of the route: its latency (and weight-S over each link's
    // bandwidth); a route without latency keeps the solver's default, 1.
    path.penalty = path.latency;
    for (int id : links) {
      const double bandwidth = routes.link(id).bandwidth;
      if (LinkState& state = link_state(id); state.bandwidth <= 0) state.bandwidth = bandwidth;  // (a kept pace stays)
      path.links.push_back(id);
      if (weight_s_ > 0) path.penalty += weight_s_ / bandwidth;
    }
    if (path.latency <= 0) path.penalty = 1;
    // An end's link that carries both ways (not split-duplex) is shared by what that end
    // sends and receives: the route back leaves (or enters) by the same link.
    const std::vector<int>& back = routes.route(dst, src).links;
    if (!links.empty() && !back.empty()) {
      path.src_both_ways = links.front() == back.back();
      path.dst_both_ways = links.back() == back.front();
    }
    path.back_bandwidth = std::numeric_limits<double>::infinity();
    for (int id : back) {
      const double bandwidth = routes.link(id).bandwidth;
      path.back_bandwidth = std::min(path.back_bandwidth, bandwidth);
      if (LinkState& state = link_state(id); state.bandwidth <= 0) state.bandwidth = bandwidth;
      path.back_links.push_back(id);
    }
  }
  last_routes_.remember(src, dst, &it->second);
  return it->second;
}

// A link's state, by network id (the table grows as routes meet new links).
Detector::LinkState& Detector::link_state(int id) {
  if (static_cast<size_t>(id) >= links_.size()) links_.resize(static_cast<size_t>(id) + 1);
  return links_[static_cast<size_t>(id)];
}

// The flows on an end's `link` that carries `out` (the rank's sends) or its receives: those
// that way, and the reverse flows of those the other way (all of them when the link
// carries both ways).
double Detector::end_flows(const RankActivity& rank, int link, bool both_ways, bool out) const {
  for (const RankActivity::EndLink& end : rank.end_links) {
    if (end.link != link) continue;
    if (both_ways) return (end.out + end.in) * (1 + cross_traffic_);
    return (out ? end.out : end.in) + cross_traffic_ * end.reverse;
  }
  return 0;
}

// A flow of sharing penalty `penalty` on `link`: the link's capacity over the load there,
// in units of this flow (the flows of a shorter route weigh more).
double Detector::link_share(int link, double penalty) const {
  const LinkState& state = links_[static_cast<size_t>(link)];
  return state.bandwidth * bandwidth_factor_ / std::max(1.0, penalty * state.load);
}

// SimGrid's max-min sharing (its LMM solver) gives each flow a rate in inverse proportion
// to its route's sharing penalty, and a flow at least, on each link it loads, the link's
// capacity over the load there: over the flows, each weighing its penalty over this one's
// (and a reverse flow 0.05 of that). The lowest of these is its rate at worst. With
// cross-traffic a transfer loads the links of its route back too (its reverse flow): it
// gets the same rate as the transfers going the other way there, however small the load
// it adds (docs/recovery.md, "Per-wait deadlines").
double Detector::expected_transfer(int src, int dst, double bytes) {
  const Route& path = route(src, dst);
  const RankActivity& from = activity(src);
  const RankActivity& to = activity(dst);
  const int src_link = path.links.empty() ? -1 : path.links.front();
  const int dst_link = path.links.empty() ? -1 : path.links.back();
  const double ends =
      std::max(end_flows(from, src_link, path.src_both_ways, true), end_flows(to, dst_link, path.dst_both_ways, false));
  const double latency = path.latency * latency_factor_;
  double bandwidth = path.bandwidth * bandwidth_factor_ / std::max(1.0, ends);
  for (int link : path.links) bandwidth = std::min(bandwidth, link_share(link, path.penalty));
  if (cross_traffic_ > 0) {
    const int back_src = path.back_links.empty() ? -1 : path.back_links.front();
    const int back_dst = path.back_links.empty() ? -1 : path.back_links.back();
    const double back_ends =
        std::max(end_flows(to, back_src, path.dst_both_ways, true), end_flows(from, back_dst, path.src_both_ways, false));
    bandwidth = std::min(bandwidth, path.back_bandwidth * bandwidth_factor_ / std::max(1.0, back_ends));
    for (int link : path.back_links) bandwidth = std::min(bandwidth, link_share(link, path.penalty));
  }
  // TCP's window caps a flow at gamma over twice the route's own latency (SimGrid takes it
  // before the latency factor: measured, a ring on 1 ms links runs at that cap).
  if (tcp_gamma_ > 0 && path.latency > 0) bandwidth = std::min(bandwidth, tcp_gamma_ / (2 * path.latency));
  // a GPU's transport (comm/message_cost.hpp) puts more bytes on the wire, may cap the rate,
  // and holds the message a hop's latency after its last byte
  double wire = bytes;
  if (const MessageCost* cost = run_.model.message_cost.get()) {
    const MessagePrice& price = cost->price_for(src, dst, bytes);
    wire = price.wire_bytes(bytes);
    bandwidth = std::min(bandwidth, price.rate_cap);
  }
  const double tolerance = std::max(from.tolerance, to.tolerance);
  return tolerance * (run_.model.overhead + latency + hop_latency(src, dst, bytes) + wire / bandwidth);
}

double Detector::hop_latency(int src, int dst, double bytes) const {
  const MessageCost* cost = run_.model.message_cost.get();
  return cost == nullptr ? 0 : cost->price_for(src, dst, bytes).hop_latency;
}

double Detector::limit(double expected, double floor) const {
  const RecoverySpec& recovery = run_.scenario->recovery;
  const double limit = recovery.timeout_is_factor ? recovery.timeout_factor * expected : recovery.timeout;
  return std::max(limit, floor);
}

double Detector::begin_wait(int world, int peer, double bytes, bool receive, TransferRef transfer, const char* phase,
                            int step) {
  settle();
  RankActivity& rank = activity(world);
  if (rank.verdict) throw VerdictPending();
  rank.phase = phase;
  rank.step = step;
  rank.doing = RankActivity::Doing::waiting;
  rank.since = engine_.now();
  rank.peer = peer;
  rank.receive = receive;
  rank.bytes = bytes;
  rank.transfer = transfer;
  rank.checks = 0;
  const Route& path = receive ? route(peer, world) : route(world, peer);
  rank.floor = receive ? floor_of(path, hop_latency(peer, world, bytes)) : floor_of(path, hop_latency(world, peer, bytes));
  expect(rank, world);
  settling_.push_back({world, load_version_});
  // The parts of the expected time that are no bytes (expected_transfer's, at its tolerance).
  const double tolerance = std::max(rank.tolerance, activity(peer).tolerance);
  rank.own_latency = tolerance * path.latency * latency_factor_;
  rank.outside =
      tolerance * (run_.model.overhead + (receive ? hop_latency(peer, world, bytes) : hop_latency(world, peer, bytes)));
  // A transfer begun before the last fault ran at the old pace until then: its bytes' rate
  // is measured from now (one that was under way when it struck was marked then).
  rank.rate_from = -1;
  if (last_strike_ >= 0 && transfer_start(world) >= 0 && transfer_start(world) < last_strike_ && !transfer_over(world))
    measure_from_now(world);
  const StepPace* last = rank.steps.latest();
  const bool new_step = last == nullptr || last->phase != phase || last->step != step || last->round != rank.round;
  if (rank.report_straggler && new_step) {
    rank.report_straggler = false;
    wake(Report{Report::Kind::straggler, world, peer, rank.since});
  }
  if (rank.report_slow_pair && new_step) {
    rank.report_slow_pair = false;
    wake(Report{Report::Kind::slow_pair, world, rank.slow_from, rank.since});
  }
  rank.next_check = rank.since + limit(rank.expected, rank.floor) + check_margin_;
  rank.stale_check = -1;
  return limit(rank.expected, rank.floor) + check_margin_;
}

double Detector::armed(int world) const {
  const RankActivity& rank = activity(world);
  return std::max(0.0, rank.since + limit(rank.expected, rank.floor) + check_margin_ - engine_.now());
}

// The least deadline of a wait on `path`: recovery.min_timeout, or by default 5 times the
// route's own latency, so that a tiny message does not time out on noise. (It was 5 times
// the longest route's between partners: on a torus at p = 256, 10 hops, 50 us, and a
// neighbour's 4 KiB at 1% of its link, 41 us, was never late.)
double Detector::floor_of(const Route& path, double hop) const {
  return run_.scenario->recovery.min_timeout.value_or(5 * (path.latency * latency_factor_ + hop));
}

double Detector::expected_now(int world) {
  RankActivity& rank = activity(world);
  if (rank.doing != RankActivity::Doing::waiting) return rank.expected;
  // Transfers posted since the wait began share the same links: the expectation only grows.
  const double now = rank.receive ? expected_transfer(rank.peer, world, rank.bytes)
                                  : expected_transfer(world, rank.peer, rank.bytes);
  rank.expected = std::max(rank.expected, now);
  return rank.expected;
}

double Detector::transfer_start(int world) const {
  const RankActivity& rank = activity(world);
  if (rank.doing != RankActivity::Doing::waiting || !rank.transfer) return -1;
  return engine_.transfer_start(rank.transfer);
}

bool Detector::transfer_over(int world) const {
  const RankActivity& rank = activity(world);
  if (rank.doing != RankActivity::Doing::waiting || !rank.transfer) return false;
  return engine_.transfer_finish(rank.transfer) >= 0;
}

double Detector::suspect(int world) {
  settle();
  RankActivity& rank = activity(world);
  const double now = engine_.now();
  // The timer armed before the wait's deadline moved (settle): not due yet, nothing is
  // read (the loads now are no business of a check that another order of the workers
  // would not have made).
  if (rank.stale_check >= 0 && std::abs(now - rank.stale_check) <= check_margin_) {
    rank.stale_check = -1;
    if (now < rank.next_check) return rank.next_check - now;
  }
  const double next = judge_wait(rank, world, now);
  rank.next_check = now + next;
  return next;
}

double Detector::judge_wait(RankActivity& rank, int world, double now) {
  const double deadline = limit(expected_now(world), rank.floor);
  const double started = transfer_start(world);
  // A transfer that started late has its whole deadline from its start.
  if (started >= 0 && now < started + deadline) return started + deadline - now + check_margin_;
  // A peer that has not posted its side is behind: that is no sign of this route's, and
  // the group's floor applies (a route's own, a few of its latencies, is passed all the
  // time by ranks of a healthy ring at p = 256 waiting on a neighbour a step behind, and
  // each report makes the coordinator read every member's wait: 12x the CPU time of
  // `none` on nodes:32:8). Its transfer, once started, has its own deadline again.
  if (const double behind = rank.since + limit(rank.expected); started < 0 && now < behind)
    return behind - now + check_margin_;
  // Later and later: a long wait on a peer busy elsewhere (a tree's leaf waiting for the
  // broadcast) reports a handful of times, not once per deadline.
  const double later = deadline * static_cast<double>(1 << std::min(++rank.checks, 20)) + check_margin_;
  const RankActivity& peer = activity(rank.peer);
  const bool behind_server = started < 0 && rank.peer >= run_.world_size();  // (detector_servers.cpp)
  const bool peer_computes = behind_server ? server_waits_on_computing(now) > 0 : peer.doing == RankActivity::Doing::computing;
  const double peer_deadline = behind_server ? server_waits_on_computing(now) : peer_computes ? compute_deadline(peer) : 0;
  // A wait on a peer that has not posted its side tells the coordinator nothing while the
  // end of its chain speaks for it (watched_until), and is not reported; once that end
  // passes its own deadline, it is.
  if (started < 0) {
    const double watched = watched_until(world);
    if (watched > now) return std::min(later, watched - now + check_margin_);
  }
  wake(Report{Report::Kind::suspicion, world, rank.peer, rank.since});
  // A peer still computing is checked again when its computation passes its deadline.
  if (started < 0 && peer_computes && peer_deadline > now) return peer_deadline - now + check_margin_;
  return later;
}

// Until when the peers `world` waits on, one after the other while none has posted its
// side, lead to a rank whose state speaks for the chain: one waiting on a transfer under
// way (its own deadline watches it: for ever, as far as this wait goes), or one computing
// within its deadline (until it passes). Until then a report from `world` would tell the
// coordinator nothing, and each made it read every member's wait (a fault-free double
// binary tree at p = 256: 146,800 reports in 4 rounds, 8x the wall time of `none`). A
// chain that ends in a rank idle or failed, or that loops: -1, reported. Once a fault has
// struck, a rank killed may still look busy here (its last state stays, and its host may
// be back): the end speaks only while its workers run on hosts up, and a transfer only
// until its own deadline (a link down breaks it: reported at once).
// Without that, a ring kept at the pace of a slow switch link reported every wait behind
// the slow step, each making the coordinator read every member (leaf-spine:8:16, a leaf's
// uplink at 1%: 3.96x the CPU time of `none`).
bool Detector::runs(int world) const {
  return engine_.host_up(world) && engine_.fate(world) == WorkerFate::running;
}

double Detector::watched_until(int world) const {
  int at = activity(world).peer;
  for (size_t hops = 0; hops < ranks_.size() && at >= 0 && at != world; ++hops) {
    const RankActivity& rank = activity(at);
    if (fault_struck_ && !runs(at)) return -1;
    if (rank.doing == RankActivity::Doing::computing) return compute_deadline(rank);
    if (rank.doing != RankActivity::Doing::waiting) return -1;
    if (const double started = transfer_start(at); started >= 0) {
      if (!fault_struck_) return std::numeric_limits<double>::infinity();
      return runs(rank.peer) ? started + limit(rank.expected, rank.floor) : -1;
    }
    at = rank.peer;
  }
  return -1;
}

void Detector::end_wait(int world) {
  settle();
  RankActivity& rank = activity(world);
  const double started = transfer_start(world);
  bool paced = false;  // late by its pace: reported last (below)
  if (started >= 0) {
    // How long the transfer took: to its end, which may be long before this wait began.
    const double finished = engine_.transfer_finish(rank.transfer);
    const double end = finished >= 0 ? finished : engine_.now();
    // Transfers posted while it waited shared its links (a receive posted before its
    // sender's transfers began expected an idle link): the expectation only grows. Only
    // a transfer slower than expected needs it (a pace is at most 1).
    if (end - started > rank.expected) expected_now(world);
    // Within its deadline: on time, at its pace in all and its bytes' (a transfer whose
    // bytes were slow clears no link: the 16 crossings of a rail's uplink at 20%, x1.99 in
    // all and their bytes x5, cleared it; Coordinator::halves_on_time).
    if (end - started <= limit(rank.expected, rank.floor)) {
      paced = note_paced(rank, started, end);
      rank.on_time_peer = rank.peer;
      rank.on_time_receive = rank.receive;
      rank.on_time_at = end;
      rank.on_time_pace = end > started ? std::min(1.0, span_expected(rank) / (end - started)) : 1.0;
      rank.on_time_rate_pace = std::min(1.0, 1 / bytes_slowdown(rank, started, end, 0));
    }
    // Only a transfer that completed says how fast it went (not one abandoned on a verdict).
    if (engine_.transfer_completed(rank.transfer)) record_pace(world, finished - started);
  }
  rank.doing = RankActivity::Doing::idle;
  rank.transfer = TransferRef{};
  // Last: a report is a simcall, and the coordinator may run before this worker goes on,
  // its verdicts resetting every member's wait (a report made before the transfer's state
  // was read left this rank reading a transfer the verdict had cleared).
  if (paced) wake(Report{Report::Kind::slow_transfer, world, rank.paced_late.peer, rank.paced_late.started});
}

// Relative detection: a transfer that ended within its deadline is late by its pace,
// whatever its size, when it took more than recovery.timeout x its expected time (within
// the deadline only because of its floor), or when the part of its time that bytes take
// (its time less the route's fixed latency) ran at recovery.straggler_threshold of its
// expected rate or slower, by more than that latency. The second is a link's bandwidth cut
// that the route's latency hides from the total: a ring of 128 crossing a rail's uplink at
// 20% (16 transfers of 128 KiB on 160 GB/s: 10 GB/s each, against 50) took 21.1 us against
// 10.6 us expected, x1.99 in all, never 3x, but its bytes ran at 1/5 of their rate, and the
// rounds stayed 1.72x slower with no entry. True when it is to be reported (end_wait does,
// once the wait is over): its wait never passed a deadline, a fault has struck (before,
// nothing can have slowed a route), and the timeout is a factor (a fixed one has no pace
// to compare with).
bool Detector::note_paced(RankActivity& rank, double started, double ended) {
  const RecoverySpec& recovery = run_.scenario->recovery;
  if (!fault_struck_ || !recovery.timeout_is_factor) return false;
  // Against the span of the transfer that the wait measured (a GPU transport's hand-shake
  // comes after it), its bytes' part from the fault that struck while it ran, if one did.
  const double took = ended - started;
  const double expected = span_expected(rank);
  const double fixed = rank.own_link >= 0 ? std::min(rank.own_latency, expected) : 0;
  const double rate_slowdown = bytes_slowdown(rank, started, ended, 0);
  const bool past_factor = took > limit(expected, 0);
  // (Only across a route with links inside it, which rule 4f reads: an end's own link is
  // the progress score's; a parameter server's incast on a star, whose sharing comes and
  // goes, once made a preempted server's survivors redo a round early.)
  const int world = static_cast<int>(&rank - ranks_.data());
  const Route& path = rank.receive ? route(rank.peer, world) : route(world, rank.peer);
  const bool slow_bytes = path.links.size() > 2 && took - expected > fixed && rate_slowdown > 1 &&
                          at_most(1 / rate_slowdown, recovery.straggler_threshold);
  if (!past_factor && !slow_bytes) return false;
  rank.paced_late = {rank.peer, rank.receive, false, started, ended, expected, rate_slowdown, !past_factor};
  return true;
}

// Its bytes' time over their expected time (the span's, less the route's latency), for the
// bytes moved from `rank.rate_from` (a fault struck while it ran: what moved before ran at
// the old pace), else from its first byte, to `end`, when `left_now` of them are still to
// move. Nothing moved since: a bound, as if the rest were about to arrive.
double Detector::bytes_slowdown(const RankActivity& rank, double started, double end, double left_now) const {
  const double span = span_expected(rank);
  const double fixed = rank.own_link >= 0 ? std::min(rank.own_latency, span) : 0;
  const double bytes_expected = span - fixed;
  const bool since_fault = rank.rate_from > started;
  const double from = std::max(since_fault ? rank.rate_from : started, started + fixed);  // bytes flow after the latency
  const double left = since_fault ? rank.left_then : 1;
  double moved = left - left_now;
  if (moved <= 0) moved = left;
  if (bytes_expected <= 0 || moved <= 0 || end <= from) return 1;
  return (end - from) / (moved * bytes_expected);
}

double Detector::left_share(int world) const {
  const RankActivity& rank = activity(world);
  double wire = rank.bytes;
  if (const MessageCost* cost = run_.model.message_cost.get()) {
    const auto [src, dst] = rank.receive ? std::pair{rank.peer, world} : std::pair{world, rank.peer};
    wire = cost->price_for(src, dst, rank.bytes).wire_bytes(rank.bytes);
  }
  if (wire <= 0) return 0;
  return std::clamp(engine_.transfer_remaining(rank.transfer) / wire, 0.0, 1.0);
}

void Detector::measure_from_now(int world) {
  RankActivity& rank = activity(world);
  rank.rate_from = engine_.now();
  rank.left_then = left_share(world);
}

void Detector::fault_struck() {
  settle();
  fault_struck_ = true;
  last_strike_ = engine_.now();
  for (int world = 0; world < static_cast<int>(ranks_.size()); ++world)
    if (transfer_start(world) >= 0 && !transfer_over(world)) measure_from_now(world);
}

double Detector::rate_slowdown(int world) const {
  const RankActivity& rank = activity(world);
  const double started = transfer_start(world);
  if (started < 0 || rank.expected <= 0) return 1;
  return std::max(1.0, bytes_slowdown(rank, started, engine_.now(), left_share(world)));
}

std::pair<int, double> Detector::implied_capacity(int waiter, int root) {
  const RankActivity& rank = activity(waiter);
  const double started = transfer_start(waiter);
  const double moved = transfer_moved(waiter);
  if (started < 0 || moved <= 0) return {-1, 0};
  const bool root_sends = rank.receive ? rank.peer == root : waiter == root;
  const Route& path = rank.receive ? route(rank.peer, waiter) : route(waiter, rank.peer);
  if (path.links.empty()) return {-1, 0};
  const int link = root_sends ? path.links.front() : path.links.back();
  const double flows =
      waiter == root ? rank.own_flows
                     : std::max(1.0, end_flows(activity(root), link, root_sends ? path.src_both_ways : path.dst_both_ways,
                                               root_sends));
  const double elapsed = engine_.now() - started;
  const double rate = moved / std::max(elapsed - fixed_time(path), 1e-3 * elapsed);
  return {link, rate * flows / bandwidth_factor_};
}

double Detector::transfer_moved(int world) const {
  const RankActivity& rank = activity(world);
  if (transfer_start(world) < 0) return 0;
  return rank.bytes - engine_.transfer_remaining(rank.transfer);
}

double Detector::slowdown(int world) const {
  const RankActivity& rank = activity(world);
  const double started = transfer_start(world);
  if (started < 0 || rank.expected <= 0) return 1;
  const double elapsed = engine_.now() - started;
  const double done = transfer_moved(world);
  // The rate so far predicts the whole transfer; with nothing through yet, only a bound.
  const double predicted = done > 0 ? elapsed * rank.bytes / done : elapsed;
  return std::max(1.0, predicted / rank.expected);
}

void Detector::computing(int world, int round, double expected_seconds, double since) {
  settle();
  RankActivity& rank = activity(world);
  rank.doing = RankActivity::Doing::computing;
  rank.since = since >= 0 ? since : engine_.now();
  rank.round = round;
  rank.expected_compute = expected_seconds * rank.tolerance;
  rank.compute_tolerance = rank.tolerance;
  rank.peer = -1;
}

void Detector::idle(int world) {
  settle();
  RankActivity& rank = activity(world);
  if (rank.doing == RankActivity::Doing::computing) note_computed(rank);
  rank.doing = RankActivity::Doing::idle;
}

// Relative detection of a computation: one that ended within its deadline (past it, the
// coordinator judged it while it ran: rule 2) but at recovery.straggler_threshold of its
// expected pace or slower is reported once it is over, once a fault has struck. A host
// 2x slower under "3x" passes no deadline, and its peers wait on it every round (a ring of
// 100 on torus:10x10: rounds of 13.76 ms against 8.72 with no recovery entry). Its pace is
// kept for the group's median (a host slower than its expectation, as every other is, is no
// straggler).
void Detector::note_computed(RankActivity& rank) {
  const double took = engine_.now() - rank.since;
  if (rank.expected_compute <= 0 || took <= 0) return;
  rank.compute_pace = std::min(1.0, rank.expected_compute / took);
  if (!fault_struck_ || took > limit(rank.expected_compute)) return;
  if (!at_most(rank.compute_pace, run_.scenario->recovery.straggler_threshold)) return;
  rank.slow_computation = {false, rank.since, took, rank.expected_compute};
  const int world = static_cast<int>(&rank - ranks_.data());
  wake(Report{Report::Kind::slow_computation, world, -1, rank.since});
}

void Detector::resumed(int world, int round) { activity(world).round = round; }

void Detector::failed(int world, int peer) {
  settle();
  RankActivity& rank = activity(world);
  rank.doing = RankActivity::Doing::failed;
  rank.since = engine_.now();
  rank.peer = peer;
  rank.transfer = TransferRef{};
  wake(Report{Report::Kind::failure, world, peer, rank.since});
}

void Detector::join(int world) { wake(Report{Report::Kind::join, world, -1, engine_.now()}); }

void Detector::undelivered(int world) { wake(Report{Report::Kind::undelivered, world, -1, engine_.now()}); }
void Detector::server_lost(int endpoint) { wake(Report{Report::Kind::server_lost, endpoint, -1, engine_.now()}); }

void Detector::verdict_read(int world) {
  RankActivity& rank = activity(world);
  rank.verdict = rank.dropped = false;
}

void Detector::wake(Report report) { engine_.report(report); }

}  // namespace collsim
