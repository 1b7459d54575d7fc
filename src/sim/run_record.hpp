#pragma once
// What a run observed, for its result and its trace: the actors append to it as things
// happen (each to its own rows), and collect_results reads it once the engine is done.
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "comm/buffer.hpp"
#include "comm/message_log.hpp"
#include "plan/run_plan.hpp"
#include "recovery/events.hpp"

namespace collsim {

// One rank's view of one round (times in simulated seconds).
struct RankRound {
  double start = -1, compute_end = -1, collective_start = -1, end = -1;
  double comm = 0;  // layered training: the buckets' collectives, added up (they overlap backward)
  double comm_added = 0;  // the same with several streams: each collective's own time, overlaps counted each
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

// One push that an asynchronous or bounded-staleness parameter server applied
// (collective.parameter_server.mode; docs/trace-format.md#updates), in the order applied.
struct ServerUpdate {
  int server = 0, worker = 0, round = 0;
  int bucket = -1;        // the gradient bucket pushed (training buckets; -1: the whole gradient)
  int version = 0;        // pushes the server had applied before this one: its place in the server's sequence
  int read_version = 0;   // pushes the server had applied when it answered the pull the gradient was computed after
  int staleness = 0;      // iterations: round - the iterations every worker had pushed to the server by that answer
  int reply_version = -1; // pushes the server had applied when it answered this push's pull (-1: never)
  double time = 0;        // when the server applied it
};

struct RunRecord {
  MessageLog messages;
  std::vector<Activity> activities;            // layered training: every rank's forward, backward and bucket intervals
  std::vector<std::vector<RankRound>> rounds;  // [round][world rank]
  std::vector<double> round_loss;              // [round], with a model
  std::vector<FaultEvent> fault_events;
  std::vector<char> slowed_work;               // by world rank: computed while a slow-host fault held its host
  std::vector<RecoveryEvent> recoveries;       // the coordinator's decisions, in order
  std::vector<ServerUpdate> updates;           // asynchronous parameter servers: every applied push, in order
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
