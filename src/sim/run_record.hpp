#pragma once
// What a run observed, for its result and its trace: the actors append to it as things
// happen (each to its own rows), and collect_results reads it once the engine is done.
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "comm/buffer.hpp"
#include "comm/message_log.hpp"

namespace collsim {

// One rank's view of one round (times in simulated seconds).
struct RankRound {
  double start = -1, compute_end = -1, collective_start = -1, end = -1;
  double comm = 0;  // layered training: the buckets' collectives, added up (they overlap backward)
  int epoch = 0;
  uint64_t model_hash = 0;  // of the weights after the update (training with a model)
};

// One interval of a rank's layered training iteration, for the timeline's compute and
// communication lanes (docs/trace-format.md#activities): a layer's forward or backward on
// the device, or a bucket's collective on the communication stream.
struct Activity {
  enum class Lane { compute, comm };
  int rank = 0, round = 0, epoch = 0;
  Lane lane = Lane::compute;
  std::string what;      // "forward", "backward", or the collective ("allreduce")
  int index = 0;         // the layer (compute) or the bucket (comm)
  double start = 0, end = 0;
  bool abandoned = false;  // a comm interval cut by a fault; the rebuilt group redoes it
};

// The trace lists the activities of the first ranks only: past them, a layered run's
// intervals would outgrow its messages (the pictures draw the first 16 ranks).
inline constexpr int max_activity_ranks = 64;

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
  int bucket = -1;                // layered training: the earliest bucket whose collective was abandoned
  std::vector<std::pair<int, double>> scores;  // the judged ranks' progress scores (rank, score)
  double score_median = -1;                    // the group's median score (-1: no full window yet)
  bool stopped = false;           // the rebuild would go below recovery.min_workers: the run stops; group = who was left

  // A new group that abandoned the collective: ranks dropped, or the same members redoing
  // it (transfers broke on a link up again). Not a join, a doubt, a root kept or a stop.
  bool rebuilds() const { return !dropped_ranks.empty() || (epoch_after > epoch_before && joined_ranks.empty()); }
};

struct RunRecord {
  MessageLog messages;
  std::vector<Activity> activities;            // layered training: every rank's forward, backward and bucket intervals
  std::vector<std::vector<RankRound>> rounds;  // [round][world rank]
  std::vector<double> round_loss;              // [round], with a model
  std::vector<FaultEvent> fault_events;
  std::vector<char> slowed_work;               // by world rank: computed while a slow-host fault held its host
  std::vector<RecoveryEvent> recoveries;       // the coordinator's decisions, in order
  // training.sharding "zero3": the parameters as their owners hold them (each rank's
  // all-gathered parameters are checked against them), and the first all-gather that differs
  Buffer owned_parameters;
  std::string gather_failure;
  std::exception_ptr failure;                  // the first error inside an actor (a bug)

  RankRound& times(int round, int world) {
    return rounds[static_cast<size_t>(round)][static_cast<size_t>(world)];
  }
};

}  // namespace collsim
