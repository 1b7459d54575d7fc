#pragma once
// What the actors of one simulation share: the workers, the fault injectors and the
// coordinator all run in this process, so they meet here (SimGrid runs one actor at a
// time: no locks are needed).
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "comm/comm_group.hpp"
#include "comm/message_log.hpp"
#include "model/cost_model.hpp"
#include "scenario/scenario.hpp"
#include "sim/payload.hpp"
#include "sim/verify.hpp"
#include "training/iteration.hpp"
#include "training/linear_regression.hpp"

namespace simgrid::s4u {
class Host;
}

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
};

struct RecoveryEvent {
  int epoch_before = 0, epoch_after = 0;
  int round = 0;                  // the round whose collective restarts
  double fault_time = -1;         // the last fault applied before detection (-1: none)
  double detected = 0;            // first rank reports a timeout or failure
  double rebuilt = 0;             // the coordinator announces the new group
  double resumed = -1;            // the first survivor restarts the collective
  double round_completed = -1;    // the round completes in the new group
  std::vector<int> dropped_ranks;
  std::vector<std::string> dropped_hosts;
  std::vector<int> group;         // survivors (world ranks), re-numbered 0.. in this order
  std::string reason;             // how the dropped ranks were chosen
  std::vector<int> joined_ranks;  // a returning worker rejoins (round = the round it joins at)
  std::vector<int> kept_ranks;    // a root kept because keeping is predicted faster
  std::vector<int> undecided_ranks;  // candidates the evidence could not separate (nobody dropped)
  std::string rule;               // the rule that fired
  std::vector<std::string> evidence;  // what the coordinator saw: wait-for edges, late transfers, predictions
  double prediction_keep = -1, prediction_drop = -1;  // seconds to finish the rounds left (straggler rule)
  int bucket = -1;                // layered training: the earliest bucket whose collective was abandoned
  std::vector<std::pair<int, double>> scores;  // the judged ranks' progress scores (rank, score)
  double score_median = -1;                    // the group's median score (-1: no full window yet)
  bool stopped = false;           // the rebuild would go below recovery.min_workers: the run stops; group = who was left
};

enum class WorkerFate { running, finished, preempted, dropped, aborted, rejoining };

struct WorkerState {
  WorkerFate fate = WorkerFate::running;
  double fate_time = 0;
  int round = 0;
  std::vector<double> weights;  // model copy (training with a model)
  Buffer result;                // the collective's output of the last completed round
  Buffer input;                 // the gradient that went into it
  int bucket = -1;              // layered training: the bucket whose collective it is in (-1: none)
};

class Detector;

struct RunState {
  const Scenario* scenario = nullptr;
  const AlgorithmInfo* algorithm = nullptr;
  Payload payload;
  ModelInput model;               // for the full group; model_for(group) gives a rebuilt group's
  std::unique_ptr<ReduceOp> op;
  CollectiveArgs args;
  std::vector<simgrid::s4u::Host*> rank_hosts;
  std::vector<int> rank_localities;  // by world rank: the hierarchical allreduce's groups
  simgrid::s4u::Host* control_host = nullptr;  // where injectors and the coordinator run
  std::unique_ptr<LinearRegression> regression;
  InputFn input;                  // synthetic gradients when there is no model
  std::vector<BucketSlice> buckets;  // layered training: in backward order (empty: one collective)
  std::vector<Activity> activities;  // layered training: every rank's forward, backward and bucket intervals
  // training.sharding: each bucket's allreduce run as its two halves, apart
  const AlgorithmInfo* shard_reduce_scatter = nullptr;
  const AlgorithmInfo* shard_allgather = nullptr;

  MessageLog messages;
  std::vector<std::shared_ptr<CommGroup>> groups;  // one per epoch; the last is current
  std::vector<WaitState> waits;                    // per world rank: whom it waits on (stall report)
  Detector* detector = nullptr;                    // recovery.policy "rebuild": the waits' watch
  std::vector<WorkerState> workers;
  std::vector<std::vector<RankRound>> rounds;      // [round][world rank]
  std::vector<double> round_loss;                  // [round], with a model
  std::vector<FaultEvent> fault_events;
  std::vector<RecoveryEvent> recoveries;
  std::vector<double> host_speed_factor;           // by rank: slow-host faults
  int highest_round_started = -1;
  // A group that takes over at the start of a round (a returning worker joins it).
  struct Switch {
    int round = -1;
    int joiner = -1;  // world rank
    std::shared_ptr<CommGroup> group;
  } pending_switch;
  std::string abort_reason;                        // coordinator gave up
  std::exception_ptr failure;                      // the first error inside an actor (a bug)

  int world_size() const { return static_cast<int>(workers.size()); }
  CommGroup& current_group() { return *groups.back(); }
  // A group of these world ranks (numbered 0.. in this order) for `epoch`, with their
  // localities, the detector's watch and the stall tracking set; not yet in `groups`.
  std::shared_ptr<CommGroup> new_group(int epoch, std::vector<int> members);
  // The model's input for a group: its size, its locality groups and its members as the
  // route endpoints (the model prices its own routes); the other fields (alpha, B, ...)
  // stay the full group's.
  ModelInput model_for(const CommGroup& group) const;
};

}  // namespace collsim
