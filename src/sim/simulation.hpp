#pragma once
// One simulation: a plan (plan/planner.hpp: the engine made, the platform built) run by one
// worker actor per rank, each running the collective on real buffers, and what happened
// collected. SimGrid allows one engine per process: one plan and one run per process.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "comm/message_log.hpp"
#include "plan/planner.hpp"
#include "plan/run_plan.hpp"
#include "sim/link_usage.hpp"
#include "sim/run_state.hpp"
#include "sim/verify.hpp"

namespace collsim {

struct RoundRecord {
  int round = 0;
  int epoch = 0;                 // the group generation that completed the round
  std::vector<int> group;        // world ranks that completed it
  double start = 0;              // first rank starts computing
  double compute_end = 0;        // last rank done computing
  double collective_start = 0;   // first rank enters the collective
  double end = 0;                // last rank leaves the collective
  std::optional<double> loss;    // training loss after the update (with a model)
  bool models_identical = true;  // every rank of the group holds the same weights
  double comm = 0;               // layered training: the buckets' collectives added up (slowest rank)
  double comm_added = 0;         // with several streams: each collective's own time added up (slowest rank)
};

// What a run of a plan observed (the plan itself beside it: what was decided before).
struct SimResult {
  std::shared_ptr<const RunPlan> plan;
  double simulated_time = 0;
  std::vector<RoundRecord> rounds;
  MessageLog messages;
  std::vector<Buffer> results;           // final group: each rank's buffer after the last round
  // Final group index -> what that rank put into the last round: the copy it kept, or
  // its input generated again when nothing could change it (no model, no recovery).
  InputFn input_of;
  std::vector<int> final_group;          // world ranks of the last group
  std::vector<FaultEvent> faults;
  std::vector<RecoveryEvent> recoveries;
  std::vector<Activity> activities;      // layered training: per rank, forward, backward, buckets
  std::vector<ServerUpdate> updates;     // asynchronous parameter servers: every applied push, in order
  std::string stall;                     // why the run never completed (empty if it did)
  int rounds_completed = 0;
  bool models_identical = true;
  double timeout = -1;                   // per wait in the first group, when recovering
  std::string gather_failure;            // zero3: the first all-gather that delivered wrong parameters
  // Buckets carried in flight (RunPlan::training): each verified as its collective ended
  // (`results` then hold no data)
  std::optional<Verification> verified_in_flight;
  LinkUsage link_usage;                  // how busy each link was (sim/link_usage.hpp)
  // training.replay (sim/replay.hpp): bucket collectives replayed and simulated, or why it was off
  int replayed = 0, simulated = 0;
  std::string replay_off;
};

// The rows of the data set a model trains on (training.samples, or 64 per worker).
int training_samples(const Scenario& scenario, int p);

// Runs the plan in the engine that planning made, and nothing else (sim/simulation.cpp).
// Call once per process, after plan_run.
SimResult simulate(std::shared_ptr<const RunPlan> plan);

// plan_run then simulate, under one guard of SimGrid's aborts: what most callers want.
SimResult run_simulation(const Scenario& scenario, const PlanOptions& options);

}  // namespace collsim
