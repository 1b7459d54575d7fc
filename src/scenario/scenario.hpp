#pragma once
// A scenario (contract, docs/scenario-format.md): what to simulate, validated, units
// resolved. It is read from JSON, possibly overridden by --set and CLI flags, then parsed.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/collective.hpp"
#include "comm/buffer.hpp"
#include "comm/reduce_op.hpp"
#include "nccl/constants.hpp"
#include "platform/network_model.hpp"
#include "scenario/parallelism_spec.hpp"
#include "training/iteration.hpp"
#include "training/noise.hpp"
#include "training/variable_placement.hpp"
#include "util/named_enum.hpp"

namespace collsim {

// NCCL's own limit on channels (MAXCHANNELS).
constexpr int max_channels = 64;

// Where the parameter servers run (collective.parameter_server.placement): on ranks 0 .. S-1,
// which also compute (`workers`, the default); as processes of their own beside the workers
// on the workers' hosts (`shared`); or on hosts no worker uses (`dedicated`).
enum class ServerPlacement { workers, shared, dedicated };

// When a server answers a worker's pull (collective.parameter_server.mode): once every worker
// has pushed that iteration (`synchronous`, one allreduce per iteration), at once (`asynchronous`),
// or once every worker is at most `staleness` iterations behind (`bounded`: stale-synchronous).
enum class ServerMode { synchronous, asynchronous, bounded };

// collective.parameter_server: how the servers of allreduce `parameter-server` are deployed
// and what their CPU costs (docs/scenario-format.md#parameter_server).
struct ParameterServerSpec {
  bool given = false;              // the scenario has the section
  ServerPlacement placement = ServerPlacement::workers;
  std::vector<std::string> hosts;  // the servers' hosts (S = their count)
  std::optional<int> per_node;     // S = per_node x nodes, on the first hosts of each node
  std::optional<double> ratio;     // S = round(ratio x workers), at least 1
  bool local_aggregation = false;  // each node reduces inside first, its first rank pushes once
  double cpu_bandwidth = 0;        // bytes/s a server handles of what it receives (per byte: 1 / this); 0: free,
                                   // as cpu_per_message: no source states either (training.md#where-the-figures-stop)
  double cpu_per_message = 0;      // seconds a server spends per message it receives or sends
  ServerMode mode = ServerMode::synchronous;
  int staleness = 0;               // mode "bounded": the bound s (iterations)
  // What a server holds: an even shard of the vector (split), or whole variables of the
  // model placed round-robin or on the least loaded server (training/variable_placement.hpp)
  VariablePlacement variables = VariablePlacement::split;
};

struct CollectiveSpec {
  Collective kind = Collective::allreduce;
  std::string algorithm;           // defaults per collective (ring, binomial, binomial)
  std::string auto_by = "model";   // algorithm "auto": choose by "model" or "simulate"
  double size = 64.0 * 1024 * 1024;  // logical bytes per rank
  Dtype dtype = Dtype::float32;
  OpKind op = OpKind::sum;
  int root = 0;
  double segment = 1024.0 * 1024;  // logical bytes per segment of pipelined algorithms
  std::optional<uint64_t> carried_elements;  // elements kept in memory per rank
  std::optional<int> servers;      // parameter-server: S, 1 to workers (default 1)
  std::optional<int> group_size;   // hierarchical: groups of this many consecutive ranks
                                   // (default: the ranks of each platform zone)
  int channels = 1;                // ring and hierarchical allreduce: concurrent rings (NCCL's channels)
  HierarchyLevel intra = HierarchyLevel::ring;  // hierarchical: the algorithm inside the groups
  HierarchyLevel inter = HierarchyLevel::ring;  // hierarchical: the algorithm between the groups
  std::optional<double> reduce_bandwidth;  // bytes/s a rank reduces; unset: reductions are free
  ParameterServerSpec parameter_server;
};

const NamedEnum<ServerPlacement>& server_placements();
const NamedEnum<ServerMode>& server_modes();
ParameterServerSpec parse_parameter_server(const nlohmann::json& object);
nlohmann::json parameter_server_json(const ParameterServerSpec& spec);

// NCCL's choices a scenario forces (docs/scenario-format.md, nccl), as NCCL's environment
// does: NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS, NCCL_PXN_DISABLE.
// Unset: NCCL's tuner chooses (src/nccl/tuner.hpp).
struct NcclSpec {
  std::optional<nccl::Algo> algo;
  std::optional<nccl::Proto> proto;
  std::optional<int> channels;
  bool pxn = true;  // on rail platforms, other-rail sends go through PXN (NCCL's default)
  // collsim's own algorithms on a GPU platform send with NCCL's send/recv and pay what it costs
  // (plan/nccl_run.hpp, setup_gpu_p2p); false: only their links' alpha and bandwidth
  bool gpu_cost = true;
  // nccl.launch: whether collsim's own algorithm stands in for NCCL's one-kernel collective
  // (per_collective, "collective") or runs alone on send/recv (per_step, "step"); unset: by the
  // scenario (send_recv_launch, plan/nccl_run.hpp)
  std::optional<nccl::SendRecvLaunch> launch;
  bool given = false;  // the scenario has an "nccl" section
};

// NCCL's MAXCHANNELS (src/include/devcomm.h, NCCL 2.18.3).
constexpr int max_nccl_channels = 32;

struct TrainingSpec {
  int rounds = 1;
  double compute = 0;          // seconds of computation before each collective, or
  double compute_flops = 0;    // flops, at the speed of the worker's host ("2Gf")
  std::string model = "none";  // "linear-regression": real gradients, averaged and applied
  int parameters = 1024;       // d, the model's parameter count
  int samples = 0;             // rows of the synthetic data set (0: 64 per worker)
  double learning_rate = 0.1;
  std::optional<double> gradient_size;  // logical bytes of the gradient (default: d elements)
  // Layers (forward order): each its parameters and forward and backward times. Given,
  // they replace `compute`, set the gradient's size, and backward overlaps the allreduce
  // of each bucket of `bucket` bytes (training/iteration.hpp).
  std::vector<Layer> layers;
  double bucket = 0;               // bytes; 0: one bucket (no overlap)
  std::optional<int> batch;        // samples per worker per iteration: samples/s
  struct Fusion {
    double buffer = 0;  // bytes
    double cycle = 0;   // seconds
  };
  std::optional<Fusion> fusion;    // with layers: Horovod's fusion instead of DDP's buckets
  Sharding sharding = Sharding::none;  // with layers: ZeRO-2 or ZeRO-3 (training/iteration.hpp)
  Overlap overlap = Overlap::backward;  // with layers: what the next forward waits for
  int streams = 1;                 // with layers: bucket collectives in flight at once (sim/streams.hpp)
  bool replay = true;              // with layers: identical collectives that run alone simulated once (sim/replay.hpp)
  NoiseSpec noise;                 // each rank's compute time per iteration, jittered (training/noise.hpp)
  // training.launch: the framework's seconds on the communication stream before each collective, and per
  // tensor (layer) it carries; 0: no primary source states them (docs/training.md#framework-overheads)
  double launch_per_collective = 0, launch_per_tensor = 0;

  bool has_layers() const { return !layers.empty(); }

  bool has_model() const { return model != "none"; }
};

enum class FaultKind { slow_link, slow_host, preempt, link_down };
std::string_view fault_kind_name(FaultKind kind);

// One injected fault (docs/scenario-format.md). Targets are checked against the platform
// when the simulation starts.
struct FaultSpec {
  FaultKind kind = FaultKind::slow_link;
  std::optional<double> at;        // simulated seconds, or
  std::optional<int> at_round;     // when the first worker starts that round
  std::string link;                // slow-link, link-down
  std::string host;                // any kind (a host's NIC for link faults)
  std::optional<int> rank;         // the host of that rank
  double factor = 1;               // bandwidth or speed multiplier (0.1 = ten times slower)
  std::optional<double> latency;   // slow-link: new latency of the link(s)
  std::optional<double> duration;  // then the fault is undone
  std::optional<double> return_after;  // preempt: the host comes back and its worker rejoins
};

enum class RecoveryPolicy { none, rebuild };

struct RecoverySpec {
  RecoveryPolicy policy = RecoveryPolicy::none;
  // A wait longer than this is suspicious: a fixed time per wait, or a multiple of the
  // expected time of that wait's transfer on its route ("3x"); never below min_timeout.
  double timeout = 0;
  double timeout_factor = 3;
  bool timeout_is_factor = true;
  std::string timeout_text = "3x";
  std::optional<double> min_timeout;  // unset: 5 alphas of the run's routes
  int min_workers = 1;                // a rebuild below this stops the run
  // A rank whose progress score (the best pace of its transfers in a step, expected over
  // actual) stays below straggler_threshold x the group median for straggler_window of its
  // steps is a straggler (0: never).
  double straggler_threshold = 0.5;
  int straggler_window = 4;
};

struct Scenario {
  std::string name = "cli";
  std::string topology;            // file or generator; empty = star:<workers>
  NetworkModel network = NetworkModel::ideal;
  double message_overhead = 0;     // o, seconds a rank spends before each message leaves
  std::optional<int> workers;      // empty = every host of the topology
  CollectiveSpec collective;
  NcclSpec nccl;
  TrainingSpec training;
  ParallelismSpec parallelism;     // tensor, pipeline, data, expert groups (docs/parallelism.md)
  std::vector<FaultSpec> faults;
  RecoverySpec recovery;
  std::vector<std::string> placement;  // host names for ranks 0..p-1, or empty
  std::vector<std::string> cfg;        // SimGrid options "KEY:VALUE"
  uint64_t seed = 1;
  std::string source_dir;          // folder of the scenario file, for relative paths
};

// Reads a scenario file: one InputError line if it cannot be read or is not JSON.
nlohmann::json load_scenario_json(const std::string& path);

// Applies "key.path=value" to the document (value parsed as JSON, else taken as a string).
void apply_override(nlohmann::json& document, const std::string& assignment);
void set_path(nlohmann::json& document, const std::string& path, const nlohmann::json& value);

// Validates everything that can be checked without a platform; errors name the field.
Scenario parse_scenario(const nlohmann::json& document, const std::string& source_dir);

// A parameter server's servers are ranks: at most `workers` of them (checked at parse time
// when the scenario gives workers, else once the platform says how many).
void check_servers(const CollectiveSpec& collective, int workers);
// collective.parameter_server.mode "asynchronous" or "bounded" against the training section:
// one push of the whole gradient per iteration, added up in floating point.
void check_asynchronous_servers(const Scenario& scenario);
// collective.parameter_server.variables other than "split": needs training.layers, not rebuild.
void check_variable_placement(const Scenario& scenario);

// The "nccl" section, checked against the collective's algorithm (only NCCL's read it).
NcclSpec parse_nccl_spec(const nlohmann::json& object, const CollectiveSpec& collective);
nlohmann::json nccl_spec_to_json(const NcclSpec& spec);

// The fully resolved scenario, as the trace records it.
nlohmann::json scenario_to_json(const Scenario& scenario, int workers, const std::string& topology);

}  // namespace collsim
