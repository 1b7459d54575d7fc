// The coordinator's insides, shared by the files that define it: coordinator.cpp (the
// protocol), coordinator_links.cpp, coordinator_judge.cpp, coordinator_prices.cpp,
// coordinator_regroup.cpp, coordinator_probes.cpp and coordinator_fabric.cpp. Its state
// machine and invariants: recovery/coordinator.hpp.
#pragma once

#include "recovery/coordinator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "algorithms/collective.hpp"
#include "algorithms/partners.hpp"
#include "model/cost_model.hpp"
#include "model/network.hpp"
#include "recovery/detector.hpp"
#include "recovery/link_probe.hpp"
#include "model/link_sides.hpp"
#include "recovery/order_search.hpp"
#include "recovery/straggler_price.hpp"
#include "training/iteration.hpp"

namespace collsim::coordination {

// The middle of `values` (the upper one of an even count); `values` is reordered.
inline double median_of(std::vector<double>& values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

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
  bool compute_over = false;       // ... and their late computations are over (rule 2b)
  bool pace_measured = false;      // s a pace (whole steps, a computation, late transfers' rates): keeping may be decided
  bool coordinator_cut = false;    // the control host's own link is down: no verdict can leave it
  bool redo = false;               // nobody to drop, but the collective cannot finish: the same members redo it
  std::vector<std::string> slow_links;  // every late transfer crosses them, and they cut no rank off: nobody to drop
  std::vector<int> fabric_halves;  // switch link halves kept (no order pays): their pace is the norm from now on
  double fabric_slowdown = 1;      // how much slower than as built they run
  std::vector<int> kept;           // roots kept, their NIC's traffic through a node mate's (detour_nics)
  std::vector<int> relays;         // the node mate of each root whose detour was priced (detour_priced)
  std::vector<int> order;          // re-rooted: the same members in this order (group rank 0 first), nobody dropped
  std::vector<std::pair<int, int>> broken;  // (member, peer) of the transfers that broke
  std::vector<std::pair<int, double>> scores;  // the roots' progress scores, and the group's median
  DecisionPrices prices;           // what keeping, dropping or regrouping would give, in useful work
  double median = -1;
};

class Coordinator {
public:
  Coordinator(const RunFacts& run, Membership& membership, Detector& detector, EnginePort& engine,
              std::vector<RecoveryEvent>& decisions, const std::vector<FaultEvent>& faults)
      : run_(run), membership_(membership), detector_(detector), engine_(engine), decisions_(decisions),
        faults_(faults), prices_(run, membership, detector), heartbeat_routes_(static_cast<size_t>(run.world_size())) {
    for (const FaultSpec& fault : run.scenario->faults) links_may_go_down_ |= fault.kind == FaultKind::link_down;
  }

  void on_report(const Report& report);
  double link_patience() const;

private:
  // The group's waits as evidence: the wait-for edges and the late transfers (or broken
  // ones) between live members.
  struct Waits {
    std::map<int, int> waited_on;           // member -> how many wait on it
    std::vector<std::pair<int, int>> late;  // (waiter, peer)
    std::vector<double> late_since;         // when each should have ended (or broke)
    std::vector<double> late_started;       // when each started (or broke)
    std::vector<double> late_slowdown;      // how much slower than expected, where known (over: 1 under way)
    std::vector<int> late_into;             // the end its data goes into (-1: broke, either)
    std::vector<bool> late_by_rate;         // late only by its bytes' rate (Detector::note_paced)
    double late_began = -1;                 // when the first of the late transfers under way started
    std::vector<std::pair<int, int>> late_flows;  // (from, to): the late transfers under way, the way their data goes
    std::set<int> ports_down;               // members whose own link (not on the way to the coordinator) broke a transfer
    std::vector<std::pair<int, int>> broken;  // (member, peer) of the transfers that broke
  };
  // A regroup must be predicted to save at least 10% of the time left.
  static constexpr double regroup_margin = 0.9;
  // A kept root's or link's expected times stretch to this much beyond its measured pace.
  static constexpr double kept_margin = 1.5;
  // What pair_search gives (coordinator_regroup.cpp): the algorithm's pairs among p members
  // and a search for orders whose pairs cross none of the link `halves` (read by reference:
  // they must outlive the search); nullopt when the order of the members does not matter
  // to the result or to the pairs (order_avoiding says which).
  struct PairSearch {
    RankPairs pairs;
    OrderSearch search;
  };
  // What on_time_avoiding finds (coordinator_regroup.cpp): a transfer of `world` that ended
  // on time after `since` at full pace (at least recovery.straggler_threshold of its
  // expected pace; seen from either end), with a member that is not one of `partners`, by
  // one of the own links its transfers with `partners` use, on a route that crosses none of
  // `links`; nullopt when there is none.
  struct OnTime {
    int peer;
    double at, pace;
  };
  // What run_probes gives (coordinator_probes.cpp), which probes each of `ways` (from, to),
  // `across` what it measures, with `bytes` (at least probe_min_bytes), one after the
  // other, in the evidence: which ran slow, past its deadline or below straggler_threshold
  // of its expected pace (a fixed recovery.timeout can be far longer than the probe).
  // nullopt when a host was lost meanwhile (a preemption made its probe late, not a link:
  // judged anew).
  struct Probed {
    std::vector<ProbeOutcome> outcomes;
    std::vector<bool> slow;
  };
  // What probe_own_link found (coordinator_fabric.cpp).
  enum class ProbeVerdict { slow, clear, none };
  // Late or broken transfers seen in this epoch (lower rank first), and when the first of
  // each pair started (or broke).
  struct LateSeen {
    double since = -1;                              // when it should have ended
    bool into_lower = false, into_higher = false;  // the way its data went: into the lower rank, the higher
    double began = -1;                              // when the first of them started (or broke)
    double slowdown = 1;                            // the most it ran slower than expected, when judged
    bool by_rate = false;                           // seen late only by its bytes' rate, every time
  };

  // The protocol: reports in, verdicts out, the rebuild and the rejoin (coordinator.cpp).
  bool in_this_epoch(const Report& report) const;
  void give_up_if_stalled();
  void lose_servers(const Report& report);
  bool under_way(int world) const;
  void decide();
  bool slow_links_only(Judgement& judgement);
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
  void stop_cut_off(const Judgement& judgement, const CommGroup& group);
  void lost_contact();
  void stop_run(const Judgement& judgement, const std::vector<int>& left, std::string reason);
  int lowest_round(const CommGroup& group, const std::vector<int>& dropped) const;
  double start_line(const CommGroup& group, const std::vector<int>& dropped, const std::vector<int>& postponed) const;
  RecoveryEvent event_for(const CommGroup& group, const Judgement& judgement) const;
  double fault_time(const Judgement& judgement, double detected) const;
  double first_suspicion(const CommGroup& group, const Judgement& judgement) const;
  double suspicious_since(int world) const;
  void record_slow_links(const Judgement& judgement);
  void record_undecided(const Judgement& judgement, double window);
  void deliver(const CommGroup& group, const std::vector<int>& dropped, const std::shared_ptr<CommGroup>& next,
               int resume_round, const std::vector<int>& postponed = {});
  void send(int world, Verdict verdict);
  void resend(int world);
  bool way_up(int world);
  void release_everyone();
  void rebuild(const Judgement& judgement);
  std::vector<int> postponed_joiners(const std::vector<int>& roots, int resume_round) const;
  void admit(int world);
  void admit_at(int world, int round, bool again);
  bool undecided_before(const std::vector<int>& ranks) const;

  // Heartbeats and links down: who is cut off, whose own link broke a transfer (coordinator_links.cpp).
  bool around_links_down(Judgement& judgement, const std::vector<LinkRef>& down);
  std::vector<LinkRef> links_down_under(const std::vector<std::pair<int, int>>& broken) const;
  bool still_runs(int world) const;
  bool admitted(int world) const;
  std::set<int> cut_off(const CommGroup& group, Judgement& out);
  bool control_hosts_own(const std::vector<LinkRef>& links, const std::vector<int>& far) const;
  std::array<int, 2> end_links(int end, int other) const;
  // A link as one physical link (both halves of a split-duplex link are one).
  std::string_view physical(int id) const { return physical_link(run_.network().link(id).name); }
  bool same_port(int end, int a, int b) const;
  // The narrowest link's bandwidth on the routes between a and b, either way (as built).
  double narrowest(int a, int b) const { return collsim::narrowest(run_.network(), a, b); }
  bool clears_port(int end, int slow, int on_time) const;
  bool same_way(int end, int other, int peer, bool received, bool late_in, bool late_out) const;
  bool between_ranks(int end, int id) const;
  LinkRef own_link_down(int end, int other, const std::set<int>& dead) const;
  bool other_own_link_down(int end, int id) const;
  bool route_up(int a, int b) const;
  std::vector<LinkRef> links_between(const std::vector<int>& candidates) const;
  std::string links_down_between(const std::vector<int>& candidates) const;
  bool crosses(int a, int b, LinkRef link) const;
  std::vector<LinkRef> down_links(int world);
  const std::vector<LinkRef>& heartbeat_route(int world);
  bool await_own_link(const Judgement& judgement);
  bool await_links(const std::vector<LinkRef>& links);

  // Reading the wait-for graph: roots, late transfers, slow links, progress scores (coordinator_judge.cpp); the
  // straggler rule's decision, priced in useful work (predict, dropping_pays, keep_recorded: coordinator_prices.cpp).
  std::vector<int> common_ends(const std::vector<std::pair<int, int>>& late, const std::map<int, std::set<int>>& partners,
                               Judgement& out) const;
  Waits read_waits(const CommGroup& group, const std::set<int>& dead, double now, Judgement& out);
  void waited_on_through_servers(const CommGroup& group, const std::set<int>& dead, Waits& waits) const;
  void read_paced(const CommGroup& group, const std::set<int>& dead, Waits& waits, Judgement& out);
  Judgement judge(bool second_look = false);
  std::vector<int> computing_late(const CommGroup& group, const std::set<int>& dead, const Waits& waits, double now,
                                  Judgement& out, double& slowest) const;
  bool judge_certain(const std::set<int>& dead, const Waits& waits, Judgement& out);
  bool judge_slow_computations(const CommGroup& group, const std::set<int>& dead, Judgement& out);
  void judge_late_transfers(const CommGroup& group, Waits& waits, bool second_look, Judgement& out);
  void note_median_slowdown(int common, Judgement& out) const;
  std::vector<double> note_late_slowdowns(Judgement& out, int common = -1) const;
  bool judge_link(const std::vector<std::pair<int, int>>& late, const std::vector<int>& members, const Waits& waits,
                  Judgement& out);
  bool judge_uncut_link(std::vector<std::string_view> shared, const std::vector<int>& members, const Waits& waits,
                        Judgement& out);
  bool judge_link_slow_both_ways(const Waits& waits, Judgement& out);
  std::vector<std::string_view> links_crossed_by_all(const std::vector<std::pair<int, int>>& late) const;
  bool judge_transit_link(int common, const std::vector<std::pair<int, int>>& late, const Waits& waits, Judgement& out);
  bool judge_dropped_link(int common, const std::vector<std::pair<int, int>>& late, const Waits& waits, Judgement& out);
  void note_dropped_links(const Judgement& judgement);
  bool judge_progress(const std::vector<int>& members, Judgement& out) const;
  void add_scores(const std::vector<int>& members, Judgement& out) const;
  Prediction predict(const Judgement& judgement) const;
  bool dropping_pays(Judgement& judgement);
  void keep_recorded(const Judgement& judgement, const std::string& why);
  double platform_model(const CommGroup& group) const { return prices_.platform_model(group.members()); }
  double healthy_model(const CommGroup& group) const { return prices_.healthy_model(group.members()); }

  // Regrouping the same members in an order whose pairs keep off slow or broken links (coordinator_regroup.cpp).
  bool regroup_avoiding(const std::vector<std::string_view>& links, const std::vector<std::pair<int, int>>& flows,
                        Judgement& out, bool exhaustive = false);
  bool regroup_around_down_links(Judgement& out);
  bool regrouping_pays(const std::vector<int>& halves, const std::vector<int>& order, Judgement& out) const;
  bool regroup_prices(const std::vector<int>& halves, const std::vector<int>& order, double slowdown, Judgement& out) const;
  std::string new_order(const std::vector<int>& order) const;
  std::vector<int> slow_halves(const std::vector<std::pair<int, int>>& flows,
                               const std::vector<std::string_view>& transit) const;
  std::vector<int> order_avoiding(const std::vector<int>& halves) const;
  std::vector<int> order_avoiding(const std::vector<int>& halves, const std::vector<int>& members, bool share = false,
                                  bool exhaustive = false) const;
  std::vector<int> cheaper_order(std::vector<int> first, std::vector<int> second) const;
  bool sharing_model(const std::vector<int>& members) const;
  std::optional<PairSearch> pair_search(const std::vector<int>& halves, const std::vector<int>& members, bool share,
                                        bool exhaustive = false) const;
  // (p members whose order is still to be made, a joiner among them: the algorithm's
  // partners; with `members`, the pairs of their order)
  std::optional<PairSearch> pair_search(const std::vector<int>& halves, int p, bool share, bool exhaustive = false,
                                        const std::vector<int>* members = nullptr) const;
  bool pairs_follow_groups() const;
  std::shared_ptr<const Network> slowed_for_pricing(const std::vector<int>& halves, double slowdown) const;
  std::optional<RankPairs> scheduled_pairs(const std::vector<int>& members) const;
  // The most messages scheduled_pairs reads (a ring of 256 on 8 channels: 1 M).
  static constexpr size_t max_scheduled_flows = size_t{1} << 22;
  std::vector<int> keeping_off_slow_links(std::vector<int> members, bool share = false) const;
  std::vector<int> halves_kept_off() const;
  std::string links_kept_off() const;
  std::optional<OnTime> on_time_avoiding(int world, const std::vector<int>& partners,
                                         const std::vector<std::string_view>& links, double since) const;

  // The fabric: late transfers that share a switch link that no rank owns, rule 4f (coordinator_fabric.cpp).
  bool judge_fabric(const Waits& waits, bool second_look, Judgement& out);
  std::vector<std::pair<int, int>> late_flows_seen() const;
  bool members_own(int half, int from, int to);
  bool owned_by_a_side(int half);
  std::set<int> halves_on_time(double since) const;
  std::vector<int> fabric_suspects(const std::vector<std::pair<int, int>>& flows, double since);
  bool end_kept_pace(int end, const std::vector<std::pair<int, int>>& flows) const;
  static std::vector<int> flows_in_common(const std::vector<std::pair<int, int>>& flows);
  void fabric_verdict(const std::vector<int>& suspects, const std::vector<std::pair<int, int>>& flows, Judgement& out);
  std::vector<int> both_halves(const std::vector<int>& halves) const;
  std::string fabric_names(const std::vector<int>& halves) const;
  void note_pair_slowdowns();
  ProbeVerdict probe_own_link(int end, const std::vector<std::pair<int, int>>& flows, Judgement& out);
  enum class FabricRegroup { regrouped, none_avoids, not_paying };
  FabricRegroup regroup_fabric(const std::vector<int>& halves, double slowdown, Judgement& out);

  // A GPU kept when only its NIC fails: its traffic through a node mate's NIC (coordinator_detour.cpp).
  std::vector<int> network_ids(const std::vector<LinkRef>& links) const;
  bool nic_down(const NicDetour& detour) const;
  bool nic_explains(int world, const NicDetour& detour, const Judgement& judgement) const;
  std::pair<int, int> relay_load(int world, int relay) const;
  double detoured_model(const std::vector<int>& roots, std::vector<int>& relays);
  bool detour_nics(Judgement& judgement);
  bool detour_priced(Judgement& judgement, int remaining);
  void detour_certain(Judgement& judgement);

  // Probes that settle a pair the evidence cannot separate, rules 5b and 5c (coordinator_probes.cpp).
  void settle_by_probes(Judgement& out);
  bool regroup_around(int sender, int receiver, double slowdown, Judgement& out);
  void settle_slow_pair(int sender, int receiver);
  std::optional<Probed> run_probes(const std::vector<std::pair<int, int>>& ways, const std::vector<std::string>& across,
                                   double bytes, Judgement& out);
  static double probe_pace(const ProbeOutcome& probe);
  bool probe_pair(int sender, int receiver, double bytes, Judgement& out);
  bool probe_halves(int sender, int receiver, double bytes, Judgement& out);
  int member_next_door(int end, int half, bool into) const;

  // State.
  const RunFacts& run_;
  Membership& membership_;
  Detector& detector_;
  EnginePort& engine_;
  std::vector<RecoveryEvent>& decisions_;     // the trace's recovery[], in order
  const std::vector<FaultEvent>& faults_;     // the faults applied and undone so far
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
  // Physical links of ranks dropped for their slow transfers, with the rank: on a torus the
  // dropped rank's host still forwards others' routes over them (note_dropped_links).
  std::vector<std::pair<std::string, int>> dropped_links_;
  std::set<std::pair<int, std::vector<int>>> undecided_;  // (epoch, ranks) left undecided
  std::set<std::array<int, 3>> probed_;  // (epoch, sender, receiver) of the pairs probed (rule 5b)
  std::set<std::array<int, 3>> halves_probed_;  // and of those whose halves were (rule 5c)
  std::set<std::pair<int, std::vector<int>>> keeps_recorded_;  // (epoch, roots) of the keeps in the trace
  std::vector<int> late_waiters_;  // members whose transfer is late, in the last judgement
  std::map<std::pair<int, int>, LateSeen> late_seen_;
  std::pair<double, double> prediction_{-1, -1};
  double stall_limit_ = -1;  // seconds (give_up_if_stalled), computed at the first use
  std::vector<int> servers_left_;  // the parameter servers' processes left (indices as planned), in order
  // Whether the scenario has a link-down fault: without one no link is ever off, and
  // nobody is cut off by a link (the check reads every member's route to the control host).
  bool links_may_go_down_ = false;
  std::vector<std::pair<bool, std::vector<LinkRef>>> heartbeat_routes_;  // by world rank: read, links
  std::vector<LinkRef> own_links_;                // the control host's links found down
  bool own_links_switch_ = false;                 // ... switch links further on, none of its own
  std::map<int, bool> members_own_;               // by link half: some member's own (members_own)
  std::map<std::pair<int, std::string>, bool> cuts_;  // by (epoch, physical link): the only way to a minority
};

}  // namespace collsim::coordination
