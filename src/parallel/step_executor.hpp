#pragma once
// One training step of a transformer on every rank of a layout (docs/parallelism.md#the-llm-step):
// each rank's compute stream runs its stage's 1F1B order of micro-batches (parallel/pipeline_schedule.hpp),
// each block's forward and backward at the stated fraction of the GPU's peak with Megatron's
// tensor collectives (and a mixture of experts' alltoalls) in between, the activations sent
// to the next stage and their gradients back; a second stream reduces each gradient bucket in
// the data-parallel group as soon as the last micro-batch's backward has made it. Every
// collective runs on real buffers and is verified (parallel/group_verifier.hpp).
#include <memory>
#include <string>
#include <vector>

#include "comm/message_log.hpp"
#include "parallel/group_verifier.hpp"
#include "parallel/step_plan.hpp"
#include "sim/verify.hpp"

namespace collsim {

// Where one rank's step went: its compute stream's time split by what it was doing, and the
// data-parallel stream's.
struct RankStepTimes {
  double compute = 0;      // blocks (and the logits) computing
  double tensor = 0;       // in tensor-parallel collectives (the stream waits for them)
  double expert = 0;       // in alltoalls
  double pipeline = 0;     // waiting for activations or gradients of other stages: the bubble and the messages
  // of `pipeline`, the part with the message already sent (its transfer); the rest is the
  // bubble: waiting for another stage to compute what it sends
  double pipeline_messages = 0;
  double data_busy = 0;    // the data-parallel stream's collectives
  double compute_end = 0;  // the compute stream's last pass done
  double end = 0;          // and the data-parallel stream too: the rank's step
  bool dropped = false;    // its replica left the step (a lost worker, recovery.policy "rebuild")
  double data_exposed() const { return end - compute_end; }
};

// A lost worker's replica leaving the step, and the data-parallel groups rebuilt from the
// others (docs/parallelism.md#a-lost-worker-recovery-on-the-data-parallel-dimension): the
// fields of the trace's recovery entries (docs/trace-format.md#recovery).
struct StepRecovery {
  int epoch_before = 0, epoch_after = 1;
  double fault_time = 0, detected = 0, rebuilt = 0, resumed = 0;
  double completed = -1;                        // the step's end in the rebuilt groups (-1: never)
  std::vector<int> dropped_ranks;               // the lost replica(s): every rank of their data index
  std::vector<std::string> dropped_hosts;
  std::vector<int> group;                       // every rank left, ascending
  std::vector<std::vector<int>> data_groups;    // the rebuilt data-parallel groups that redo their buckets
  std::vector<DataChoice> data_choices;         // their collectives, chosen again for their size (StepPlan's order)
  std::string reason, rule;
  bool stopped = false;                         // no replica left: the step stops
};

// One interval of a rank's lanes, for the trace and the pictures: "compute", "tensor",
// "pipeline", "expert", "data".
struct StepInterval {
  int rank = 0;
  std::string lane, what;
  int micro_batch = -1;
  double start = 0, end = 0;
};

struct StepResult {
  std::shared_ptr<const StepPlan> plan;
  std::vector<RankStepTimes> ranks;
  std::vector<StepInterval> intervals;  // of the first max_activity_ranks ranks
  MessageLog messages;
  Verification verification;
  uint64_t collectives = 0, pipeline_messages = 0;  // verified
  std::vector<StepRecovery> recoveries;
  std::vector<CollectiveRun> runs;  // each collective verified, as it completed (GroupVerifier::max_runs at most)
  double kept_fraction = 1;  // replicas whose gradients reached the update, over the data size
  std::string stall;
  double step_time = 0;
  int critical_rank = 0;  // the rank that ended last
};

// A CollectiveRun's communicator by name: tensor, pipeline, data, expert, expert-data, or
// "data (rebuilt)" (a data-parallel group rebuilt after a lost worker).
const char* step_communicator_name(int communicator);

// Runs the step of `plan` (its scenario's parallelism.step) in the engine planning made.
StepResult simulate_step(const std::shared_ptr<const RunPlan>& plan, std::shared_ptr<const StepPlan> step);

}  // namespace collsim
