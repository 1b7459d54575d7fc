#pragma once
// What the actors of a simulated training step share (parallel/step_executor.cpp runs them,
// parallel/step_recovery.cpp rebuilds the data-parallel groups when a worker is lost): the
// communicators' groups, each rank's place in them, its times and streams.
#include <array>
#include <exception>
#include <map>
#include <unordered_map>
#include <memory>
#include <string>
#include <vector>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "comm/comm_group.hpp"
#include "comm/message_log.hpp"
#include "parallel/group_verifier.hpp"
#include "parallel/step_executor.hpp"

namespace collsim {

// The communicators of a step; each has its own Comm tag, so that their messages between one
// pair of ranks never match each other's (the pipeline has one tag each way). rebuilt_data
// and rebuilt_expert_data hold the data-parallel and expert-data groups rebuilt from the
// survivors after a lost worker.
enum Communicator {
  tensor_comm,
  pipeline_comm,
  data_comm,
  expert_comm,
  expert_data_comm,
  rebuilt_data_comm,
  rebuilt_expert_data_comm,
  communicators
};

struct Place {
  int group = -1, rank = -1;
};

struct StepState {
  std::shared_ptr<const RunPlan> plan;
  std::shared_ptr<const StepPlan> step;
  MessageLog log;
  std::array<std::vector<std::vector<int>>, communicators> members;           // [communicator][group]
  std::array<std::vector<std::shared_ptr<CommGroup>>, communicators> groups;  // likewise
  // The hosts of each group's switches, when its algorithm reduces in them (NVLS, CollNet:
  // parallel/group_switches.hpp), and the next collective of the group whose switches' sides
  // are not started yet: its first rank to reach a collective starts them.
  std::array<std::vector<std::vector<std::string>>, communicators> switch_hosts;  // [communicator][group copy]
  std::map<const CommGroup*, int> switch_started;
  // When each pipeline message was sent, by its receiver, direction, chunk and micro-batch
  // (pipeline_key): the receiver splits its wait into the bubble and the transfer.
  std::unordered_map<uint64_t, double> pipeline_posted;
  // The data-parallel (and expert-data) collectives chosen again for the size of the groups
  // rebuilt after a lost worker, one per StepPlan::data_choices entry (empty: none rebuilt).
  std::vector<DataChoice> rebuilt_choices;
  GroupAlgorithm rebuilt_expert_data_reduce;
  std::vector<std::array<Place, communicators>> places;                      // [world][communicator]
  std::vector<std::array<int, communicators>> sequence;                      // [world]: collectives run so far
  std::vector<RankStepTimes> times;                                          // [world]
  std::vector<double> speed;                                                 // [world]: its GPU's speed (slow-host: below 1)
  std::vector<simgrid::s4u::SemaphorePtr> bucket_ready;                               // [world]: a token per bucket made
  std::vector<int> buckets_made;                                             // [world]: tokens released so far
  std::vector<simgrid::s4u::SemaphorePtr> retired;  // replaced by a rebuild: kept until the stopped streams unwound
  std::vector<std::shared_ptr<CommGroup>> retired_groups;  // likewise (a stopped stream may unwind inside one)
  std::vector<char> compute_done, data_done;                                 // [world]: each stream ended
  std::vector<simgrid::s4u::ActorPtr> compute_actors, data_actors;                    // [world]
  std::vector<StepInterval> intervals;
  std::vector<StepRecovery> recoveries;
  std::vector<char> lost_replica;  // [data index]: its replica left the step
  int epoch = 0;
  std::vector<std::string> broken;  // transfers that broke under policy none: "rank R at T"
  std::string stopped;              // why recovery stopped the step (no replica left)
  GroupVerifier verifier;
  ReduceOp sum{OpKind::sum, Dtype::bfloat16};
  std::exception_ptr failure;  // the first error inside an actor (a bug)
};

inline uint64_t pipeline_key(int receiver, bool forward, int chunk, int micro_batch) {
  return static_cast<uint64_t>(receiver) << 40 | static_cast<uint64_t>(forward ? 1 : 0) << 39 |
         static_cast<uint64_t>(chunk) << 28 | static_cast<uint64_t>(micro_batch);
}

// The data-parallel choices communicator c (data_comm, rebuilt_data_comm) runs its buckets with.
const std::vector<DataChoice>& data_choices_of(const StepState& state, Communicator c);

// Builds communicator c's groups of `members` (world ranks) in `epoch`, and each member's place.
void make_groups(StepState& state, Communicator c, std::vector<std::vector<int>> members, int epoch);

// Rank `world`'s data-parallel stream on communicator `data` (data_comm, or rebuilt_data_comm
// after a rebuild, with rebuilt_expert_data_comm for the experts' gradients): each bucket
// reduced once backward made it, the experts' gradients, then the parameters gathered.
void run_data_stream(StepState& state, int world, Communicator data);
// Starts it in an actor of its own on the rank's host (kept in state.data_actors).
void start_data_stream(const std::shared_ptr<StepState>& shared, int world, Communicator data);

// A stream ended: the rank's step ends when both have.
void stream_ended(StepState& state, int world, bool compute);

// Lost workers (preempt, link-down) under recovery.policy "rebuild": their replicas leave,
// the data-parallel groups are rebuilt from the others, which redo their buckets
// (parallel/step_recovery.cpp). Under "none" the fault only strikes, and the step stalls.
void lose_workers(const std::shared_ptr<StepState>& shared, const PlannedFault& fault);

}  // namespace collsim
