#pragma once
// The detector (recovery.policy "rebuild"): what every rank is doing, read from its waits.
//
// Each blocking wait gets a deadline from what *its* transfer should cost on *its* route:
// alpha + bytes / B of the route as built, before any fault (with the network model's correction factors), B its
// share of each link against the transfers in flight there, weighted as SimGrid's solver weighs them (with
// cross-traffic, on the links of its route back too: their reverse flows), times recovery.timeout when it is a factor
// ("3x"), or the fixed recovery.timeout; never less than recovery.min_timeout. A deadline
// counts from the moment the transfer starts (both sides posted); before that the rank
// waits on its peer, an edge of the wait-for graph. A wait past its deadline is only a
// suspicion: the rank reports it (out of band, like a monitor's heartbeat, so that an
// unfounded suspicion costs the group nothing) and goes on waiting. The coordinator reads
// the detector's view and alone decides; its verdict cancels the transfers of the ranks
// that must abandon them.
//
// Events in, from the engine (sim/recovery_adapter.cpp): transfers posted and finished,
// waits begun and ended, computations, failures, joins. Reports out, to the coordinator,
// through EnginePort::report. It reads the clock and the progress of the transfers it
// watches through the EnginePort too, and nothing else of the engine.
#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "comm/comm_group.hpp"
#include "recovery/engine_port.hpp"
#include "recovery/events.hpp"
#include "recovery/membership.hpp"
#include "recovery/run_facts.hpp"
#include "util/last_pairs.hpp"

namespace collsim {

// `value` at most `bound`, or at least, up to the rounding of the times they come from: a
// host at half speed computes in twice its expected time to within an ulp or two, and its
// pace is recovery.straggler_threshold's 0.5, not a hair above it.
inline bool at_most(double value, double bound) { return value <= bound * (1 + 1e-9); }

inline bool at_least(double value, double bound) { return value >= bound * (1 - 1e-9); }

// The best pace a rank had in one step of the collective (a label), in earlier rounds.
struct LabelPace {
  int round = -1;
  double before = 0;      // in the rounds before `round`
  double this_round = 0;  // in `round`
  double receive_before = 0, receive_this_round = 0;  // the same, of the step's receives alone
};

// The other ends of a step's transfers (world ranks): the first few in place (a ring's
// step has two), any more on the heap, so that recording one touches no other cache line.
class StepPeers {
public:
  void clear() {
    count_ = 0;
    more_.clear();  // keeps its capacity
  }
  void push_back(int peer) {
    if (count_ < in_place) first_[count_++] = peer;
    else more_.push_back(peer);
  }
  void append_to(std::vector<int>& out) const {
    out.insert(out.end(), first_, first_ + count_);
    out.insert(out.end(), more_.begin(), more_.end());
  }

private:
  static constexpr int in_place = 5;  // what fits in StepPace's first cache line
  int count_ = 0;
  int first_[in_place] = {};
  std::vector<int> more_;
};

// One step of a rank (the transfers it waited on under one label of the algorithm, see
// Comm::label): the best pace among them, expected / actual duration, at most 1; and that
// pace against the best the rank had in the same step of earlier rounds (the first time,
// in an epoch's first round, the best pace itself: against the expected time alone).
// The second is the score's: what the expected times miss (contention on a shared link, a
// server's) is the same in every round, and divides out.
// Aligned to a cache line, what a wait updates in its first: a ring rank's steps are each a
// miss (the other ranks' waits come between two of its own).
struct alignas(64) StepPace {
  const char* phase = nullptr;
  LabelPace* label = nullptr;  // its label's entry (valid until the next step opens)
  double best = 0;
  double relative = 1;
  int step = -1, round = -1;
  StepPeers peers;  // the other ends of its transfers (world ranks)
};

// A rank's last steps, in a ring of recovery.straggler_window slots reused in place (a
// wait's bookkeeping allocates nothing once the window is full), and the best paces of its
// labels by phase, then step (a handful of phases, steps numbered from 0).
class StepWindow {
public:
  StepWindow() = default;
  // A copy's labels are its own: the cached phase is looked up again.
  StepWindow(const StepWindow& other) : steps_(other.steps_), last_(other.last_), labels_(other.labels_) {}
  StepWindow& operator=(const StepWindow& other) {
    if (this != &other) *this = StepWindow(other);
    return *this;
  }
  StepWindow(StepWindow&&) noexcept = default;  // moved label tables keep their entries in place
  StepWindow& operator=(StepWindow&&) noexcept = default;

  // The current step, if any (latest), and to add to it (current: there is one).
  const StepPace* latest() const { return steps_.empty() ? nullptr : &steps_[last_]; }
  StepPace& current() { return steps_[last_]; }
  // Opens a new step, forgetting the oldest when `window` are kept.
  StepPace& open(size_t window);
  bool full(size_t window) const { return steps_.size() >= window; }
  const std::vector<StepPace>& steps() const { return steps_; }
  LabelPace& label(const char* phase, int step);
  void clear() {
    steps_.clear();
    last_ = 0;
  }
  void clear_labels() {
    labels_.clear();
    phase_ = nullptr;
  }

private:
  std::vector<StepPace> steps_;
  size_t last_ = 0;
  // The phase looked up last (a collective's steps come phase by phase) and its steps'
  // entries, kept here: a new step reads no entry of labels_ (another miss) to find them.
  const char* phase_ = nullptr;
  LabelPace* entries_ = nullptr;
  size_t entry_count_ = 0;
  std::vector<LabelPace>* by_step_ = nullptr;
  std::vector<std::pair<const char*, std::vector<LabelPace>>> labels_;
};

// What one rank is doing, as the detector sees it. Every wait reads and writes most of
// it, and the waits of 255 other ranks come between two of a rank's: it starts a cache
// line, what its peers' waits read of it (the transfers it has in flight, its tolerance)
// in the first, with the wait itself; the progress counters in the second.
struct alignas(64) RankActivity {
  double tolerance = 1;           // a kept straggler: its expected times are this much longer
  // The transfers it has posted and not seen end, by the link of its own that they leave
  // or enter by: an end's share of a link is that link's count, not the rank's total (the
  // root of a naive allreduce on a torus receives 63 transfers over 6 links; counted as
  // one, a rank at 1% of its link ran 10x its share and was never late).
  struct EndLink {
    int link = -1;        // route cache link id (-1: a route without links)
    int out = 0, in = 0;  // its sends that leave by the link, its receives that enter by it
    int reverse = 0;      // with cross-traffic: the reverse flows of its transfers that cross it
  };
  std::vector<EndLink> end_links;
  double since = 0;               // start of the computation, the wait, or the failure
  double bytes = 0;
  double expected = 0;            // seconds the transfer should take once started
  TransferRef transfer;           // the one it waits on
  const char* phase = nullptr;    // the label of the current wait
  int step = -1;
  int peer = -1;                  // world rank waited on (waiting, failed)
  enum class Doing { idle, computing, waiting, failed } doing = Doing::idle;
  int round = 0;
  int checks = 0;                 // suspicions of the current wait (each next check twice as late)
  double next_check = 0;          // when the current wait is next due to be checked (Detector::suspect)
  double stale_check = -1;        // a check armed for before its deadline moved (Detector::settle), if any
  double floor = 0;               // the current wait's least deadline (Detector::floor_of)
  bool receive = false;
  bool verdict = false;           // the coordinator decided: abandon the current operation
  bool dropped = false;           // ... and leave the run
  bool straggling = false;        // reported as a straggler; cleared when its score recovers
  bool report_straggler = false;  // to report at its next wait (the collective's state is then settled)
  // A slow pair: receives from one peer below straggler_threshold of the step's earlier
  // receive pace, straggler_window times in a row (reported once, at its next step).
  int slow_from = -1, slow_receives = 0;
  double slow_pace = 1;  // the last slow receive's pace against the earlier ones
  bool report_slow_pair = false, slow_pair_reported = false;
  // A transfer late by its pace (Detector::note_paced): it ended within its deadline but
  // took more than recovery.timeout x its expected time (a crossing of two racks at 5% of
  // the link between them, 10.9 KiB in 28.8 us against 8.1 us expected and a floor of
  // 35 us), or its bytes ran at recovery.straggler_threshold of their expected rate or
  // slower (a rail's uplink at 20%). The coordinator reads it once (`judged`).
  struct PacedLate {
    int peer = -1;
    bool receive = false, judged = true;
    double started = 0, ended = 0, expected = 0;
    double rate_slowdown = 1;  // how much slower its bytes ran than expected (Detector::bytes_slowdown)
    bool by_rate = false;      // only its bytes' rate was slow: within recovery.timeout x in all
  } paced_late;
  // Progress evidence: the last transfer that completed within its deadline.
  int on_time_peer = -1;
  bool on_time_receive = false;   // it received (else sent)
  double on_time_at = -1;         // when it ended
  double on_time_pace = 0;        // expected / actual time (at most 1)
  double on_time_rate_pace = 0;   // its bytes': expected / actual, the route's latency set aside (at most 1)
  // Completed receives in its current round and in the round before (this epoch).
  int counted_round = -1;
  long receives = 0, receives_before = 0;
  double expected_compute = 0;    // seconds the computation should take
  double compute_tolerance = 1;   // the tolerance it was expected with (when it began)
  double compute_pace = 1;        // its last computation's: expected / actual time, at most 1
  // A computation late by its pace: it ended within its deadline but at
  // recovery.straggler_threshold of its expected pace or slower (a host 2x slower under
  // "3x": its peers wait on it every round, and no deadline ever passes). The coordinator
  // reads it once (`judged`).
  struct SlowComputation {
    bool judged = true;
    double started = 0, took = 0, expected = 0;
  } slow_computation;
  // Progress: its last recovery.straggler_window steps, the current one last.
  StepWindow steps;
  // The current wait's own end of its route: the link (route cache id), the rank's
  // transfers on it (this one included) and the route's latency (the part of the
  // transfer's span before its first byte).
  int own_link = -1;
  double own_flows = 1, own_latency = 0;
  // What of `expected` lies outside the transfer's own span (SimGrid's, from both sides
  // posted to its last byte), which is what a wait measures: the sender's overhead before
  // it, a GPU transport's hand-shake after it (NCCL's 14 us on rail:16:8, beside 2.6 us of
  // bytes: compared with the whole, a crossing whose bytes ran 20x slower looked 3.2x).
  double outside = 0;
  // Where its bytes' rate is measured from when a fault struck while it ran (-1: from its
  // start; what moved before the fault ran at the old pace), and the share of its bytes
  // still to move then.
  double rate_from = -1, left_then = 1;
  // Its own links' capacity (bytes/s, in the platform's units) as its slow transfers since
  // its progress was last forgotten imply it: each one's rate x the rank's transfers on the
  // link; the least by link. What the straggler rule prices a kept rank's links at.
  std::vector<std::pair<int, double>> slow_capacity;
};

class Detector {
public:
  // It reads the run (expected times) and the current group (the median score); it
  // changes neither. Its reports, the clock and the transfers' progress go through `engine`.
  Detector(const RunFacts& run, const Membership& membership, EnginePort& engine);
  ~Detector();

  // The engine's events. A transfer of `world` with `peer` is posted, or is done with
  // (the transfers in flight share the links, so the expected times count them).
  void posted(int world, int peer, bool receive);
  void finished(int world, int peer, bool receive);
  // `world` blocks on `transfer`, with `peer`, in the step the algorithm labelled (`phase`,
  // `step`): returns the seconds after which the wait is suspicious. Throws VerdictPending
  // when a verdict already abandons it.
  double begin_wait(int world, int peer, double bytes, bool receive, TransferRef transfer, const char* phase, int step);
  // The wait passed that time: report it if it says something; returns the seconds until
  // the next check. A check armed before the wait's deadline moved (Detector::settle),
  // made before the wait is due, does nothing but say when it is.
  double suspect(int world);
  // The instant's events are all in once the clock has moved on: the waits begun in the
  // last instant get the expected times of the transfers in flight at its end, whatever
  // order the workers ran in at that instant (SimGrid runs them in the order they were
  // created). Every event calls it first; a deadline that moves up is checked by someone
  // beside the worker (EnginePort::check_at), one that moves back by the worker's next check.
  void settle();
  // The wait is over (its transfer completed, or a verdict abandoned it).
  void end_wait(int world);
  // A fault of the scenario is being applied (sim/faults.cpp): from now on every wait past
  // its deadline is reported (suspect), and the transfers under way measure their bytes'
  // rate from here.
  void fault_struck();
  // A wait begun before the first fault, which struck during it: the seconds from now to
  // its deadline (begin_wait's, from the wait's start; 0 when passed).
  double armed(int world) const;
  bool runs(int world) const;  // its worker runs, on a host up
  // Once a fault has struck, a verdict may come at any moment: every wait listens from its
  // start. Before, only a suspicious one does (a fault-free wait costs one activity).
  bool faults_struck() const { return fault_struck_; }

  // The worker loop tells what it does outside waits.
  // `world` computes what should take `expected_seconds` since `since` (-1: now).
  void computing(int world, int round, double expected_seconds, double since = -1);
  // `world` is idle: a computation under way ended (note_computed judges its pace).
  void idle(int world);
  // `world` redoes `round`'s collective in a new group (it may have gone back a round):
  // the round the coordinator reads is the one it is in now.
  void resumed(int world, int round);
  // A transfer failed (its peer died, a link went down): certain, reported at once.
  void failed(int world, int peer);
  // A new worker on `world` (its host came back) asks to rejoin.
  void join(int world);
  // An undelivered verdict: `world` read its last one and it did not cross.
  void undelivered(int world);
  // The host of parameter server `endpoint` (world size + s) was preempted: reported at once.
  void server_lost(int endpoint);
  // `world` read its verdict: it is no longer under one.
  void verdict_read(int world);

  const RankActivity& activity(int world) const { return ranks_[static_cast<size_t>(world)]; }
  RankActivity& activity(int world) { return ranks_[static_cast<size_t>(world)]; }
  // Seconds a wait or a computation expected to take `expected` may last before it is
  // suspicious; `floor`: the least of them (recovery.min_timeout, or the default's).
  double limit(double expected) const { return limit(expected, min_timeout_); }
  double limit(double expected, double floor) const;
  // The deadline of `world`'s current wait, its transfer expected to take `expected`.
  double wait_limit(int world, double expected) const { return limit(expected, activity(world).floor); }
  // When a computation begun at rank.since passes its deadline.
  double compute_deadline(const RankActivity& rank) const { return rank.since + limit(rank.expected_compute); }
  // How long after its deadline a wait is checked (the constructor says why): a wait is
  // found suspicious then.
  double check_margin() const { return check_margin_; }
  // Expected seconds of `bytes` from `src` to `dst`, sharing the route with the transfers
  // in flight now: at each end (both ways when its link carries both) and across the links
  // in between.
  double expected_transfer(int src, int dst, double bytes);
  // The expected time of `world`'s wait, with the transfers in flight now at either end.
  double expected_now(int world);
  // When the transfer `world` waits on started (-1: its peer has not posted yet).
  double transfer_start(int world) const;
  // The transfer `world` waits on is over already (a wait_all reaching a transfer that
  // finished while it waited on an earlier one): its wait ends at once and says nothing of
  // its peer. (The coordinator can read the rank between the start of that wait and its end.)
  bool transfer_over(int world) const;
  // Bytes the transfer `world` waits on has moved (0 before it starts). (It reads the
  // transfer's progress, which makes SimGrid update it: only when acting.)
  double transfer_moved(int world) const;
  // The slowdown of `world`'s transfer: predicted duration / expected (>= 1 when late).
  // (It reads the transfer's progress, which makes SimGrid update it: only when acting.)
  double slowdown(int world) const;
  // How much slower the bytes of `world`'s transfer run than expected (>= 1), from its
  // first byte or from the last fault that struck while it ran: a slow link's bandwidth
  // cut, which the whole time (latency, a transport's hand-shake, bytes moved before the
  // fault) understates. With nothing moved since, a bound. (It reads the progress too.)
  double rate_slowdown(int world) const;
  // The expected span of `rank`'s transfer: its expected time less what lies outside it.
  static double span_expected(const RankActivity& rank) { return std::max(0.0, rank.expected - rank.outside); }
  // The capacity of `root`'s own link on the route of `waiter`'s transfer (root is one of
  // its ends) that the transfer's rate so far implies: the rate x root's transfers on that
  // link. {link, capacity}; {-1, 0} when nothing has moved yet.
  std::pair<int, double> implied_capacity(int waiter, int root);
  // What `world`'s slow transfers implied of its own `link` (infinity: none was slow there).
  double slow_capacity(int world, int link) const;

  // Progress scores (the straggler rule). A rank's score is the best relative pace over its
  // last straggler_window steps (-1: fewer steps so far); the median is over the members
  // that have a full window (-1: none).
  double score(int world) const;
  double median_score(const std::vector<int>& members) const;
  // Members whose score is below straggler_threshold x the median.
  std::vector<int> stragglers(const std::vector<int>& members) const;
  // Whom `world` exchanged with in its window.
  std::vector<int> window_peers(int world) const;
  // The fraction of its current collective `world` has completed: its receives against the
  // round before's in this epoch (0 when there is none to compare with).
  double collective_done(int world) const;
  // A new group: past paces, and kept ranks' pasts, no longer say anything.
  void new_epoch();
  void forget_progress(int world);
  // A kept straggler: its expected times (its transfers', its computations') are
  // `tolerance` times the platform's from now on (if longer than they are), its current
  // wait's included. A computation under way keeps its deadline: it is judged again at each
  // check, its time so far growing (the straggler rule's ski-rental bound).
  void keep(int world, double tolerance);
  // A link kept at a slower pace (a switch link that no order avoids): its capacity is
  // `bandwidth` (bytes/s, if less than it is) in every expected time from now on.
  void pace_link(int link, double bandwidth) {
    LinkState& state = link_state(link);
    state.bandwidth = std::min(state.bandwidth, bandwidth);
  }
  // The tolerance `world`'s current computation was expected with (its own when it began).
  double compute_tolerance(int world) const { return activity(world).compute_tolerance; }

private:
  void wake(Report report);
  double judge_wait(RankActivity& rank, int world, double now);
  void expect(RankActivity& rank, int world);
  void record_pace(int world, double took);
  bool note_paced(RankActivity& rank, double started, double ended);
  double bytes_slowdown(const RankActivity& rank, double started, double end, double left_now) const;
  double left_share(int world) const;  // of its transfer's bytes, still to move
  void measure_from_now(int world);
  void note_computed(RankActivity& rank);
  void check_slow_pair(RankActivity& rank, LabelPace& label, double pace);
  size_t window() const;
  void check_straggler(int world);

  const RunFacts& run_;
  const Membership& membership_;
  EnginePort& engine_;
  std::vector<RankActivity> ranks_;
  // What a post or a wait reads of it first, together (cross-traffic's route back after).
  struct Route {
    double latency = 0, bandwidth = 0;
    double penalty = 1;           // SimGrid's sharing penalty of a flow on this route
    std::vector<int> links;       // route cache link ids
    int sends = 0, receives = 0;  // posted from src to dst and not over
    int under_way = 0;            // of them matched: flows, counted in the links' loads
    bool src_both_ways = false, dst_both_ways = false;  // an end's link carries both directions
    double back_bandwidth = 0;    // of the route back (dst to src), where cross-traffic puts the reverse flow
    std::vector<int> back_links;  // its links
  };
  // Every wait and every transfer posted looks its route up (read from the run's route
  // cache, model/route_cache.hpp, once per pair): the last route each rank
  // used each way is tried first (a ring rank always sends right, hears left), then the
  // table (its nodes never move, so the pointers stay valid). The first try is inline: a
  // call that saves registers writes to the actor's stack, a cache miss or so by the time
  // a rank runs again (the other ranks run in between on theirs).
  Route& route(int src, int dst) {
    if (Route* last = last_routes_.find(src, dst)) return *last;
    return find_route(src, dst);
  }
  Route& find_route(int src, int dst);
  double floor_of(const Route& path, double hop) const;
  // A GPU transport's hand-shake after a message's last byte (0 without one).
  double hop_latency(int src, int dst, double bytes) const;
  double watched_until(int world) const;
  // A synchronous parameter server's process that has not answered waits on every member
  // still computing (it has not pushed): the first compute deadline among them still ahead
  // (0: none), when a wait on the server is checked again (detector_servers.cpp).
  double server_waits_on_computing(double now) const;
  std::unordered_map<uint64_t, Route> routes_;
  LastPairs<Route> last_routes_;  // by world rank
  // By route cache link id: its nominal bandwidth, and the transfers under way across it,
  // each 1 / its route's penalty, and with cross-traffic the reverse flows of those whose
  // route back crosses it. Side by side: a wait reads both, in one cache line.
  struct LinkState {
    double bandwidth = 0;
    double load = 0;
  };
  std::vector<LinkState> links_;
  LinkState& link_state(int id);
  void under_way(Route& path);  // after a post or an end of the pair's transfers
  double end_flows(const RankActivity& rank, int link, bool both_ways, bool out) const;
  void note_capacity(RankActivity& rank, double rate);
  // A transfer's time on `path` that its bytes do not set: the overhead and the latency.
  double fixed_time(const Route& path) const { return run_.model.overhead + path.latency * latency_factor_; }
  static RankActivity::EndLink& end_link(RankActivity& rank, int link);
  void count_end(RankActivity& rank, const Route& path, bool receive, int change);
  double link_share(int link, double penalty) const;
  // SimGrid's cross-traffic (LV08's default, network/crosstraffic): each transfer also
  // loads the links of its route back with a reverse flow at this weight (the TCP acks,
  // 5% of its rate: SimGrid 3.32, network_cm02.cpp, comm_action_expand_constraints).
  static constexpr double reverse_flow_weight = 0.05;
  double cross_traffic_ = 0;  // reverse_flow_weight, or 0 without cross-traffic
  double weight_s_ = 0;       // network/weight-S: part of a route's sharing penalty
  double latency_factor_ = 1, bandwidth_factor_ = 1, tcp_gamma_ = 0;
  double min_timeout_ = 0;
  bool fault_struck_ = false;  // fault_struck()
  // The waits begun at `instant_`, with the version of the loads they were expected with
  // (load_version_ counts every change of a link's load or an end's transfers).
  struct Settling {
    int world;
    long version;
  };
  std::vector<Settling> settling_;
  double instant_ = -1;
  long load_version_ = 0;
  double last_strike_ = -1;    // when the last fault struck
  double check_margin_ = 0;  // how long after its deadline a wait is checked (see the constructor)
};

}  // namespace collsim
