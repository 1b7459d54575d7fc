#pragma once
// One simulation: build the SimGrid engine and platform, start one worker actor per
// rank running the collective on real buffers, run, and collect what happened.
// SimGrid allows one engine per process: call run_simulation once per process.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/registry.hpp"
#include "comm/message_log.hpp"
#include "sim/link_usage.hpp"
#include "model/cost_model.hpp"
#include "model/cut_bound.hpp"
#include "scenario/scenario.hpp"
#include "sim/payload.hpp"
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
};

// One row of --algorithm auto's table.
struct AutoCandidate {
  // A row for this algorithm, nothing measured yet.
  explicit AutoCandidate(std::string name) : algorithm(std::move(name)) {}

  std::string algorithm;
  double model_time = 0;                 // its cost formula on this platform
  std::optional<double> simulated_time;  // its short simulation (auto by "simulate")
  std::string error;                     // why its simulation failed, if it did
  std::string bottleneck;                // the link that set the model's slowest step (empty: none)
  int sharing = 0;                       // messages crossing it then
  std::string skipped;                   // why auto by model did not consider it (impractical here)
};

struct SimOptions {
  std::vector<std::string> cfg;  // the user's --cfg options, applied after the model's
  InputFn input;                 // rank inputs; default: fill_input with the scenario's seed
  bool check_only = false;       // stop once the platform and placement are checked
  std::vector<AutoCandidate> auto_simulated;  // algorithm "auto" by "simulate": the trials
  bool topology_bound = true;    // look for the platform's tightest cut (a trial needs no bound)
  uint64_t kept_messages = default_kept_messages;  // single messages kept for traces and pictures (--messages)
};

struct SimResult {
  int workers = 0;
  std::string topology;                  // file path or generator string
  std::string platform_kind;             // "file" or "generator"
  std::vector<std::string> all_hosts;    // platform order
  std::vector<std::string> rank_hosts;   // host of each rank
  size_t link_count = 0;
  const AlgorithmInfo* algorithm = nullptr;
  Payload payload;
  ModelInput model;                      // alpha and B as read from the platform's routes
  double simulated_time = 0;
  std::vector<RoundRecord> rounds;
  MessageLog messages;
  std::vector<Buffer> results;           // final group: each rank's buffer after the last round
  std::vector<Buffer> inputs;            // final group: what each rank put into it
  std::vector<int> final_group;          // world ranks of the last group
  std::vector<std::string> notes;        // things the user should know (fallbacks, scaling)
  std::vector<std::string> warnings;     // likely mistakes in the scenario (printed on stderr)
  std::vector<FaultEvent> faults;
  std::vector<RecoveryEvent> recoveries;
  std::vector<Activity> activities;      // layered training: per rank, forward, backward, buckets
  std::string stall;                     // why the run never completed (empty if it did)
  int rounds_completed = 0;
  bool models_identical = true;
  double timeout = -1;                   // per wait in the first group, when recovering
  int buckets = 0;                       // layered training: the buckets of each iteration (0: no layers)
  std::vector<Bucket> bucket_plan;       // layered training: the buckets, in backward order
  double memory_per_worker = 0;          // layered training: bytes of parameters, gradients, optimizer states
  Sharding sharding = Sharding::none;    // layered training: training.sharding
  std::optional<int> batch;              // training.batch: samples per worker and iteration
  std::vector<AutoCandidate> auto_candidates;  // --algorithm auto: the table, best first
  std::string auto_by;                   // "model" or "simulate"
  LinkUsage link_usage;                  // how busy each link was (sim/link_usage.hpp)
  CutBound topology_bound;               // the platform's tightest cut (model/cut_bound.hpp)
};

SimResult run_simulation(const Scenario& scenario, const SimOptions& options);

// The SimGrid options collsim sets, each with where it came from: the network model's,
// collsim's speed settings, the scenario's "cfg", then the user's --cfg (later ones win).
std::vector<std::pair<std::string, std::string>> simgrid_options(const Scenario& scenario,
                                                                const std::vector<std::string>& user_cfg);

}  // namespace collsim
