#pragma once
// What each collsim subcommand does, as library calls (src/main.cpp only parses flags).
// Each returns the process exit status: 0 success, 1 the run failed (verification),
// and throws InputError for bad input (status 2).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "comm/message_log.hpp"

namespace collsim {

struct RunRequest {
  std::string scenario_path;             // may be empty: flags only
  std::vector<std::string> overrides;    // "key.path=value", applied in order (--set, then flags)
  std::vector<std::string> cfg;          // SimGrid --cfg options
  std::string trace_path;
  uint64_t kept_messages = default_kept_messages;  // single messages kept for the trace and pictures (--messages)
  bool quiet = false;
  bool progress = false;                 // lines on stderr as the run starts simulating and each round starts
  bool baseline = false;                 // also run the fault-free twin and report the time lost
  std::string svg_path, html_path, perfetto_path;  // pictures of the run (src/viz)
  std::string sizes;                     // "8B:1GiB:x2": one run per size, as a table (size_table.hpp)
  std::string csv_path;                  // with sizes: the table's rows as CSV
  int jobs = 0;                          // with sizes: runs at once (0: one per core)
};

int command_run(const RunRequest& request);
// --messages: "all", "none" or a number of messages.
uint64_t parse_kept_messages(const std::string& text);

// `collsim render TRACE.json`: the pictures of a trace written earlier.
struct RenderRequest {
  std::string trace_path;
  std::string svg_path, html_path, perfetto_path;
};
int command_render(const RenderRequest& request);

// Runs a scenario file and returns its baseline (collsim-baseline/1); one engine: call in
// a process of its own.
nlohmann::json baseline_of_scenario(const std::string& path);

struct CompareRequest {
  std::string baseline, current;
  std::vector<std::string> tolerances;  // "0.5%", "simulated_time=0"
  std::string format = "text";
  bool strict = false;                  // any change fails, improvements included
};
int command_compare(const CompareRequest& request);
int command_baseline_update(const std::string& scenarios_dir, const std::string& out_dir, bool quiet);
// `collsim validate`: the scenario checked and planned, not run; with `print_plan`, the
// plan as JSON (plan/plan_json.hpp) instead of the one-line summary.
int command_validate(const RunRequest& request, bool print_plan = false);
int command_list(const std::string& what);

// `collsim model`'s flags; the command line (src/cli/model.cpp) checks their fixed ranges.
struct ModelRequest {
  std::string collective = "allreduce";
  std::string algorithm;           // a name, or "all": rank every algorithm of the collective
  std::string topology;            // a platform (file or generator): its own routes instead of --bandwidth/--latency
  std::string network = "ideal";   // with --topology: ideal or realistic (the model is then an estimate)
  int workers = 0;
  std::string size, bandwidth, latency;
  std::string dtype = "float32";
  std::string segment = "1MiB";
  std::string overhead = "0";
  int servers = 1;                 // parameter-server
  std::optional<int> group_size;   // hierarchical: unset = one group of all ranks
  std::string inter_bandwidth, inter_latency;  // hierarchical, between groups (default: as inside)
  int inter_flows = 1;             // messages between groups sharing one link at once
  int channels = 1;                // ring and hierarchical: concurrent rings (collective.channels)
  std::string intra = "ring", inter = "ring";  // hierarchical: the algorithm inside and between the groups
  std::string reduce_bandwidth;    // bytes/s a rank reduces (empty: reductions are free)
  std::string sizes;               // FROM:TO[:xFACTOR]: one row per size (model_sizes.cpp) instead of --size
  int jobs = 0;                    // with sizes: children at once (0: one per core)
};
int command_model(const ModelRequest& request);
struct AlgorithmInfo;
struct ModelInput;
struct ModelEstimate;
struct Scenario;
struct RunPlan;
struct PlanOptions;
class SimGridGuard;
enum class Collective;
// One algorithm's model within the model's own limits (README "Limits": the messages its
// schedule describes, those of one step), or an InputError naming the limit it passes:
// `collsim model --algorithm NAME`, with or without a platform.
ModelEstimate estimate_within_model_limits(const AlgorithmInfo& algorithm, const ModelInput& in);
// `collsim model --topology`: the model on a platform's own routes (model_command.cpp).
int command_model_on_platform(const ModelRequest& request);
// The scenario `collsim run` would simulate with the same flags ("all": auto), validated.
Scenario scenario_of(const ModelRequest& request);
// The alpha-beta star's model input from the flags (no --topology), validated.
ModelInput formula_input(const ModelRequest& request);
// plan_run for `collsim model`, its errors about hierarchical's levels naming --intra and --inter.
RunPlan plan_levels(const Scenario& scenario, const PlanOptions& options, SimGridGuard& guard);
// A flag the algorithm does not read is refused, as a scenario's setting is.
void check_flags_read(const ModelRequest& request, Collective collective, const AlgorithmInfo& algorithm);
// `collsim model --sizes`: one row per size, each priced in a child process (model_sizes.cpp).
int command_model_sizes(const ModelRequest& request);

}  // namespace collsim
