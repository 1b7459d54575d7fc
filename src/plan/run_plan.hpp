#pragma once
// A run, decided: everything fixed before the engine runs, as one value. plan_run
// (plan/planner.hpp) makes it from a scenario; the engine (sim/simulation.hpp) runs it and
// nothing else; `collsim validate --plan` prints it and every trace records it
// (plan/plan_json.hpp, docs/trace-format.md#plan).
//
// SimGrid builds a platform only inside its one engine of the process, so planning builds
// the platform there (and reads its routes): "before the engine runs" is before
// Engine::run. The plan names hosts and links; the engine finds them by name.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/model_input.hpp"
#include "algorithms/registry.hpp"
#include "model/cut_bound.hpp"
#include "plan/input_data.hpp"
#include "plan/locality.hpp"
#include "plan/payload.hpp"
#include "plan/run_limits.hpp"
#include "scenario/scenario.hpp"
#include "training/iteration.hpp"
#include "training/zero3.hpp"

namespace collsim {

// The trace lists the activities of the first ranks only: past them, a layered run's
// intervals would outgrow its messages (the pictures draw the first 16 ranks).
inline constexpr int max_activity_ranks = 64;

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
  int channels = 0;                      // a variant on this many channels (0: the scenario's)

  // "ring", or "ring, 8 ch" for a variant on channels.
  std::string label() const { return channels > 0 ? algorithm + ", " + std::to_string(channels) + " ch" : algorithm; }
};

// Which algorithm runs, and why. A new way of choosing (a variant search, a tuner) fills
// the same fields: what was asked, what was chosen with its parameters, by what, and why.
struct AlgorithmChoice {
  const AlgorithmInfo* algorithm = nullptr;  // what runs
  std::string asked;                         // collective.algorithm as the scenario says ("ring", "auto")
  std::string by = "scenario";               // "scenario" (named there), or auto's "model" or "simulate"
  std::string reason;                        // for people: why this one
  // The settings of the scenario that the chosen algorithm reads (its Uses: root, segment,
  // servers, channels, groups), as it will run them; a variant's own settings go here too.
  nlohmann::json parameters = nlohmann::json::object();
  std::vector<AutoCandidate> candidates;     // auto: every candidate, best first
};

// The platform as built in the engine.
struct PlatformPlan {
  std::string source;              // file path or generator string
  std::string kind;                // "file" or "generator"
  std::vector<std::string> hosts;  // every host, in platform order
  // every host is a GPU (PlatformInfo::gpus) and collsim's own algorithms pay a GPU's
  // transport there (nccl.gpu_cost): the links' latencies are in that transport
  bool gpu_transport = false;
  size_t link_count = 0;
};

// Layered training: the collectives of an iteration (none without layers).
struct TrainingPlan {
  std::vector<BucketSlice> buckets;  // in backward order, each with its carried elements
  double memory_per_worker = 0;      // bytes of parameters, gradients, optimizer states
  Sharding sharding = Sharding::none;
  // training.sharding: each bucket's allreduce run as its two halves, apart
  const AlgorithmInfo* reduce_scatter = nullptr;
  const AlgorithmInfo* allgather = nullptr;
  std::optional<Zero3Plan> zero3;    // "zero3": the stream's ops and the device's layers
  std::optional<int> batch;          // training.batch: samples per worker and iteration
  // Each bucket's data exists only while its collective runs (carries_buckets_in_flight,
  // plan/run_limits.hpp): made from the inputs at its start, verified at its end.
  bool buckets_in_flight = false;

  double launch_per_collective = 0, launch_per_tensor = 0;  // training.launch
  // collective.parameter_server.variables: each bucket's variables on their servers (in
  // bucket order; empty: even shards)
  std::vector<std::shared_ptr<const ServerPieces>> server_pieces;

  int bucket_count() const { return static_cast<int>(buckets.size()); }
  // What the framework spends before the collective of bucket b (-1: the whole gradient, one
  // tensor): training.launch's per-collective cost and its per-tensor cost for each layer.
  double launch_seconds(int b) const {
    const int tensors = b < 0 ? 1 : buckets[static_cast<size_t>(b)].bucket.last - buckets[static_cast<size_t>(b)].bucket.first + 1;
    return launch_per_collective + tensors * launch_per_tensor;
  }
  // The servers' deployment for bucket b's collective: `deployment` with the bucket's pieces.
  ServerDeployment deployment_of(const ServerDeployment& deployment, size_t b) const {
    ServerDeployment out = deployment;
    if (b < server_pieces.size()) out.pieces = server_pieces[b];
    return out;
  }
  // zero3 verifies each bucket's slice as a reduce-scatter (empty otherwise).
  std::vector<BucketSlice> sharded_buckets() const { return zero3 ? buckets : std::vector<BucketSlice>{}; }
};

// A fault of the scenario, its targets found on the platform.
struct PlannedFault {
  FaultSpec spec;
  int index = 0;                   // in scenario.faults
  std::string target;              // for people: "link host-3_link", "host host-5 (rank 5)"
  std::string host;                // slow-host, preempt (empty: a link fault)
  std::vector<std::string> links;  // slow-link, link-down
  std::vector<int> ranks;          // the workers on `host`; for a link, those behind it
};

// A switch that reduces in the network for the chosen algorithm (comm/switch_ops.hpp): its
// host, its kind, the world ranks it serves, its endpoint in the routes (after the workers').
// One switch may run several actors (NVLS: its reductions and its multicasts), one entry each.
struct SwitchPlan {
  std::string host;
  SwitchKind kind = SwitchKind::nvlink;
  std::vector<int> members;
  int endpoint = 0;
};

struct RunPlan {
  Scenario scenario;                     // as run (its units resolved, its defaults filled in)
  PlatformPlan platform;
  int workers = 0;
  std::vector<std::string> rank_hosts;   // the host of each rank
  RankLocality locality;                 // the ranks' locality groups (hierarchical, channels)
  std::vector<SwitchPlan> switches;      // NCCL's in-network reductions: the switches they use
  std::string control_host;              // where fault injectors and the coordinator run
  Payload payload;                       // logical and carried sizes
  AlgorithmChoice choice;
  ModelInput model;                      // the cost model's input: the platform's routes, alpha and B
  TrainingPlan training;
  std::vector<PlannedFault> faults;
  RunSize limits;                        // what the run needs, checked against README "Limits"
  bool model_only = false;               // planned for `collsim model`: no run follows (its own limits)
  CutBound topology_bound;               // the platform's tightest cut (time 0: none computed)
  // model_only: empty when the model's routes come from the generator's structure, else
  // why they were read from the platform built in SimGrid (a platform file, PXN, ...)
  std::string model_routes;
  std::vector<std::string> notes;        // things the user should know (fallbacks, scaling)
  std::vector<std::string> warnings;     // likely mistakes in the scenario (printed on stderr)
  // How the engine runs it: the ranks' inputs (default: generated from the scenario's
  // seed) and how many single messages it keeps for traces and pictures (--messages).
  InputFn input;
  InputAtFn input_at;  // the same inputs, a part of the vector at a time (buckets in flight)
  uint64_t kept_messages = 0;

  const AlgorithmInfo& algorithm() const { return *choice.algorithm; }
};

}  // namespace collsim
