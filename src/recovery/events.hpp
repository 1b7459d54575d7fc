#pragma once
// What crosses between the engine and recovery, as data: the events recovery is told of
// (a fault applied, a worker's fate), the reports its detector sends its coordinator, and
// what comes out of it (verdicts for the workers, recovery events for the trace). The
// calls that carry them are in recovery/engine_port.hpp (recovery asks the engine) and
// recovery/detector.hpp (the engine tells recovery).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace collsim {

class CommGroup;

// A verdict's size on the wire: a few words (what its trip costs, verdict_seconds).
constexpr uint64_t control_message_bytes = 64;

// Where a worker is in its life, as the engine knows it.
enum class WorkerFate { running, finished, preempted, dropped, aborted, rejoining };

// Worker -> coordinator, out of band (recovery/detector.hpp): a suspicion (a wait past its
// deadline), a failure (a transfer that broke), a straggler (a progress score below the
// threshold for the window), a slow transfer (one that ended within its deadline's floor
// but past recovery.timeout x its expected time: late by its pace), a slow computation (one
// that ended within its deadline at straggler_threshold of its expected pace or slower), a
// join (a worker whose host came back), or an undelivered verdict (the worker's read of its
// last verdict failed: a link on its way went down).
struct Report {
  enum class Kind {
    suspicion, failure, straggler, slow_pair, slow_transfer, slow_computation, join, undelivered,
    server_lost  // a parameter server's host was preempted (world: the server's endpoint)
  } kind = Kind::suspicion;
  int world = 0;
  int peer = -1;        // whom it waits on (-1: nobody, or the coordinator)
  double since = 0;     // since when
};

// Coordinator -> worker, over the simulated network: leave the run, or the new group and
// the round to resume from (the "new group" message), or an admission: a returning worker
// joins the group at the start of that round and receives the model there (it has no state
// of its own: it restarts the round from its beginning, the model's share).
struct Verdict {
  bool dropped = false;
  std::shared_ptr<CommGroup> group;
  int resume_round = 0;
  bool admission = false;
  // A member of the new group starts it no earlier than this (-1: at once): every survivor
  // at one instant, as a new communicator's setup is a collective call (Coordinator::start_line).
  double start_at = -1;
};

// A fault of the scenario applied or undone (the engine's fault injectors record it; the
// coordinator reads when the faults it judges struck).
struct FaultEvent {
  int fault = 0;            // index in scenario.faults
  std::string kind;
  std::string target;       // for people: "link host-3_link", "host host-5 (rank 5)"
  std::string action;       // "applied" or "undone"
  double time = 0;
  // The same as facts: the host struck (or whose NIC is), the links changed, and every
  // rank running on that host (several when a host runs several workers).
  std::string host;
  std::vector<std::string> links;
  std::vector<int> ranks;
  // A link-down applied: the members it separates from the coordinator (static routes), who
  // can take no part in the group while it is down (sim/faults.cpp, cut_off_by).
  std::vector<int> cut_off;
  // Applied: whether it touched anything (sim/fault_effects.hpp): a message crossed a
  // slowed link while it was slow, a slowed host computed. A preemption and a link-down
  // always count.
  bool touched = true;
};

// One choice a decision weighed (docs/recovery.md, "Decisions priced in useful work"): the
// time to finish the rounds left with it (the rebuild's own cost included), who trains on,
// and the useful work that gives: rounds left x workers x batch / seconds.
struct DecisionPrice {
  std::string choice;  // "keep", "drop", "regroup" or "detour" (a GPU's NIC traffic through a node mate's)
  double seconds = 0;
  int workers = 0;
  double samples_per_second = 0;
};

// The choices of one decision, and the one taken (the most samples per second, a regroup
// only by a margin).
struct DecisionPrices {
  int rounds_left = 0;  // the current round included
  int batch = 1;        // samples per worker per round (training.batch; 1 without it)
  std::vector<DecisionPrice> choices;
  std::string chosen;
  bool empty() const { return choices.empty(); }
};

// What the coordinator decided, for the trace's recovery[] (docs/trace-format.md).
struct RecoveryEvent {
  int epoch_before = 0, epoch_after = 0;
  int round = 0;                  // the round whose collective restarts
  double fault_time = -1;         // the fault that struck a judged rank, applied before detection (-1: none)
  double detected = 0;            // first rank reports a timeout or failure
  double rebuilt = 0;             // the coordinator announces the new group
  double resumed = -1;            // the first survivor restarts the collective
  double round_completed = -1;    // the round completes in the new group
  std::vector<int> dropped_ranks;
  std::vector<std::string> dropped_hosts;
  std::vector<int> group;         // survivors (world ranks), re-numbered 0.. in this order
  std::string reason;             // how the dropped ranks were chosen
  std::vector<int> joined_ranks;  // a returning worker rejoins (round = the round it joins at)
  std::vector<int> postponed_ranks;  // joiners a rebuild did not take along (no model yet): they rejoin later
  std::vector<int> kept_ranks;    // a root kept because keeping is predicted faster
  std::vector<int> undecided_ranks;  // candidates the evidence could not separate (nobody dropped)
  std::string rule;               // the rule that fired
  std::vector<std::string> evidence;  // what the coordinator saw: wait-for edges, late transfers, predictions
  double prediction_keep = -1, prediction_drop = -1;  // seconds to finish the rounds left (straggler rule)
  DecisionPrices prices;          // what the decision weighed, in useful work (empty: it weighed nothing)
  int bucket = -1;                // layered training: the earliest bucket whose collective was abandoned
  std::vector<std::pair<int, double>> scores;  // the judged ranks' progress scores (rank, score)
  double score_median = -1;                    // the group's median score (-1: no full window yet)
  bool stopped = false;           // the rebuild would go below recovery.min_workers: the run stops; group = who was left
  // Rule "a parameter server lost": the servers lost (their indices as planned, 0 .. S-1) and
  // the hosts of those left, in their order after it: the one at i holds shard i of the
  // vector split evenly over them (or the variables placed over them), as if the run had
  // started with them alone (docs/recovery.md, parameter servers' processes).
  std::vector<int> lost_servers;
  std::vector<std::string> servers;

  // A new group that abandoned the collective: ranks dropped, or the same members redoing
  // it (transfers broke on a link up again). Not a join, a doubt, a root kept or a stop.
  bool rebuilds() const { return !dropped_ranks.empty() || (epoch_after > epoch_before && joined_ranks.empty()); }
};

}  // namespace collsim
