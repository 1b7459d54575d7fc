#include "scenario/scenario.hpp"
#include "scenario/server_checks.hpp"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "algorithms/registry.hpp"
#include "platform/platform.hpp"
#include "scenario/json_fields.hpp"
#include "scenario/parallel_nccl_spec.hpp"
#include "scenario/step_faults.hpp"
#include "scenario/training_spec.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"
#include "util/named_enum.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"
#include "scenario/settings_read.hpp"

using nlohmann::json;

namespace collsim {
namespace {

const NamedEnum<FaultKind>& fault_kinds() {
  static const NamedEnum<FaultKind> table{"fault",
                                          {{FaultKind::slow_link, "slow-link"},
                                           {FaultKind::slow_host, "slow-host"},
                                           {FaultKind::preempt, "preempt"},
                                           {FaultKind::link_down, "link-down"}}};
  return table;
}

const NamedEnum<RecoveryPolicy>& recovery_policies() {
  static const NamedEnum<RecoveryPolicy> table{"policy",
                                               {{RecoveryPolicy::none, "none"}, {RecoveryPolicy::rebuild, "rebuild"}}};
  return table;
}

// hierarchical's algorithms inside and between the groups: ring, halving-doubling, tree
// (between the groups only), nvls (inside only); one of them other than ring: one channel.
void parse_levels(const json& object, CollectiveSpec& spec) {
  for (const char* key : {"intra", "inter"}) {
    if (!object.contains(key)) continue;
    const std::string field = fmt::format("collective.{}", key);
    const std::string name = get_string(object[key], field);
    const HierarchyLevel level = std::string_view(key) == "intra" ? parse_intra_level(name, field)
                                                                  : parse_inter_level(name, field);
    (std::string_view(key) == "intra" ? spec.intra : spec.inter) = level;
  }
  if ((spec.intra != HierarchyLevel::ring || spec.inter != HierarchyLevel::ring) && spec.channels > 1)
    throw InputError("collective.channels: channels cut the vector over rings; with collective.intra or inter other "
                     "than ring use 1");
}

CollectiveSpec parse_collective_spec(const json& object) {
  check_keys(object, "collective", {"kind", "algorithm", "size", "dtype", "op", "root", "segment", "carried_elements",
                                    "servers", "group_size", "auto", "channels", "reduce_bandwidth",
                                    "parameter_server", "intra", "inter"});
  CollectiveSpec spec;
  if (object.contains("kind")) spec.kind = parse_collective(get_string(object["kind"], "collective.kind"), "collective.kind");
  spec.algorithm = default_algorithm(spec.kind);
  if (object.contains("algorithm")) spec.algorithm = get_string(object["algorithm"], "collective.algorithm");
  // "auto" picks the algorithm with the best cost formula on the platform, "nccl" the one
  // NCCL's tuner would (at run time).
  if (!chosen_at_run_time(spec.algorithm)) find_algorithm(spec.kind, spec.algorithm, "collective.algorithm");
  if (spec.algorithm == "nccl" && spec.kind != Collective::allreduce && spec.kind != Collective::alltoall)
    throw InputError(fmt::format("collective.algorithm: nccl runs NCCL's choice for an allreduce or an alltoall; for {} "
                                 "name the algorithm ({})", collective_name(spec.kind), join(algorithm_names(spec.kind))));
  if (object.contains("auto")) {
    spec.auto_by = get_string(object["auto"], "collective.auto");
    if (spec.auto_by != "model" && spec.auto_by != "simulate")
      throw InputError(fmt::format("collective.auto: '{}' is not a way to choose; allowed: model, simulate", spec.auto_by));
  }
  if (object.contains("dtype")) spec.dtype = parse_dtype(get_string(object["dtype"], "collective.dtype"), "collective.dtype");
  if (object.contains("op")) spec.op = parse_op(get_string(object["op"], "collective.op"), "collective.op");
  if (object.contains("size")) spec.size = get_quantity(object["size"], "collective.size", parse_size);
  if (spec.size <= 0) throw InputError("collective.size: must be > 0 bytes");
  const double elements = spec.size / static_cast<double>(dtype_size(spec.dtype));
  if (elements != std::floor(elements))
    throw InputError(fmt::format("collective.size: {} bytes is not a whole number of {} elements ({} bytes each)",
                                 spec.size, dtype_name(spec.dtype), dtype_size(spec.dtype)));
  if (object.contains("root")) spec.root = static_cast<int>(get_integer(object["root"], "collective.root", 0, 1 << 30));
  if (object.contains("segment")) spec.segment = get_quantity(object["segment"], "collective.segment", parse_size);
  if (spec.segment <= 0) throw InputError("collective.segment: must be > 0 bytes");
  if (object.contains("carried_elements"))
    spec.carried_elements =
        static_cast<uint64_t>(get_integer(object["carried_elements"], "collective.carried_elements", 1, 1LL << 32));
  if (object.contains("servers"))
    spec.servers = static_cast<int>(get_integer(object["servers"], "collective.servers", 1, 1'000'000));
  if (object.contains("group_size"))
    spec.group_size = static_cast<int>(get_integer(object["group_size"], "collective.group_size", 1, 1'000'000));
  if (object.contains("channels"))
    spec.channels = static_cast<int>(get_integer(object["channels"], "collective.channels", 1, max_channels));
  parse_levels(object, spec);
  if (object.contains("reduce_bandwidth")) {
    const json& value = object["reduce_bandwidth"];
    if (!value.is_string())
      throw InputError(fmt::format("collective.reduce_bandwidth: must be a bandwidth with a unit such as \"200GBps\", "
                                   "got {}", value.dump()));
    spec.reduce_bandwidth = parse_bandwidth(value.get<std::string>(), "collective.reduce_bandwidth");
  }
  if (object.contains("parameter_server")) {
    spec.parameter_server = parse_parameter_server(object["parameter_server"]);
    if (chosen_at_run_time(spec.algorithm))
      throw InputError(fmt::format("collective.parameter_server: deploys the servers of parameter-server, which \"{}\" "
                                   "would rank as ranks serving; name the algorithm (parameter-server)", spec.algorithm));
  }
  if (spec.servers && spec.parameter_server.given &&
      (!spec.parameter_server.hosts.empty() || spec.parameter_server.per_node || spec.parameter_server.ratio))
    throw InputError("collective.servers: the servers' count is set twice (by collective.parameter_server's hosts, "
                     "per_node or ratio too): give one");
  check_settings_read(object, spec);
  return spec;
}

FaultSpec parse_fault(const json& object, const std::string& where, int rounds) {
  check_keys(object, where, {"kind", "at", "at_round", "link", "host", "rank", "factor", "latency", "duration", "return_after"});
  FaultSpec fault;
  if (!object.contains("kind"))
    throw InputError(fmt::format("{}.kind: missing; allowed: {}", where, join(fault_kinds().names())));
  fault.kind = fault_kinds().parse(get_string(object["kind"], where + ".kind"), where + ".kind");
  const std::string_view kind = fault_kinds().name(fault.kind);

  if (object.contains("at") == object.contains("at_round"))
    throw InputError(fmt::format("{}: give exactly one of \"at\" (a time) or \"at_round\" (a round)", where));
  if (object.contains("at")) fault.at = get_quantity(object["at"], where + ".at", parse_time);
  if (object.contains("at_round")) {
    fault.at_round = static_cast<int>(get_integer(object["at_round"], where + ".at_round", 0, 1 << 30));
    if (*fault.at_round >= rounds)
      throw InputError(fmt::format("{}.at_round: round {} does not exist; the scenario has rounds 0 to {}", where,
                                   *fault.at_round, rounds - 1));
  }
  const int targets = object.contains("link") + object.contains("host") + object.contains("rank");
  const bool link_fault = fault.kind == FaultKind::slow_link || fault.kind == FaultKind::link_down;
  if (targets != 1)
    throw InputError(fmt::format("{}: name exactly one target: {}", where,
                                 link_fault ? "\"link\", \"host\" (its NIC) or \"rank\"" : "\"host\" or \"rank\""));
  if (object.contains("link")) {
    if (!link_fault) throw InputError(fmt::format("{}.link: a {} fault targets a host or a rank", where, kind));
    fault.link = get_string(object["link"], where + ".link");
  }
  if (object.contains("link")) check_name(fault.link, where + ".link");
  if (object.contains("host")) {
    fault.host = get_string(object["host"], where + ".host");
    check_name(fault.host, where + ".host");
  }
  if (object.contains("rank")) fault.rank = static_cast<int>(get_integer(object["rank"], where + ".rank", 0, 1 << 30));

  if (object.contains("factor")) {
    if (fault.kind == FaultKind::preempt || fault.kind == FaultKind::link_down)
      throw InputError(fmt::format("{}.factor: a {} fault has no factor", where, kind));
    // a denormal factor leaves a link with no bandwidth at all; a huge one overflows it
    if (!object["factor"].is_number() || !(object["factor"].get<double>() >= 1e-6) ||
        !(object["factor"].get<double>() <= 1e6))
      throw InputError(fmt::format("{}.factor: must be a number from 1e-06 to 1e+06 (0.1 = ten times slower), got {}",
                                   where, object["factor"].dump()));
    fault.factor = object["factor"].get<double>();
  }
  if (object.contains("latency")) {
    if (fault.kind != FaultKind::slow_link) throw InputError(fmt::format("{}.latency: only a slow-link has one", where));
    fault.latency = get_quantity(object["latency"], where + ".latency", parse_time);
  }
  if (fault.kind == FaultKind::slow_link && !object.contains("factor") && !object.contains("latency"))
    throw InputError(fmt::format("{}: a slow-link needs \"factor\" (bandwidth multiplier) and/or \"latency\"", where));
  if (fault.kind == FaultKind::slow_host && !object.contains("factor"))
    throw InputError(fmt::format("{}: a slow-host needs \"factor\" (speed multiplier, 0.25 = four times slower)", where));
  if (object.contains("duration")) {
    if (fault.kind == FaultKind::preempt)
      throw InputError(fmt::format("{}.duration: a preempted worker does not come back by itself", where));
    fault.duration = get_quantity(object["duration"], where + ".duration", parse_time);
  }
  if (object.contains("return_after")) {
    if (fault.kind != FaultKind::preempt)
      throw InputError(fmt::format("{}.return_after: only a preempted host comes back (use duration)", where));
    fault.return_after = get_quantity(object["return_after"], where + ".return_after", parse_time);
  }
  return fault;
}

RecoverySpec parse_recovery(const json& object) {
  check_keys(object, "recovery",
             {"policy", "timeout", "min_timeout", "min_workers", "straggler_threshold", "straggler_window"});
  RecoverySpec spec;
  if (object.contains("policy")) {
    spec.policy = recovery_policies().parse(get_string(object["policy"], "recovery.policy"), "recovery.policy");
  }
  if (object.contains("timeout")) {
    const json& timeout = object["timeout"];
    const std::string text = timeout.is_string() ? timeout.get<std::string>() : "";
    if (!text.empty() && text.back() == 'x') {
      char* end = nullptr;
      spec.timeout_factor = std::strtod(text.c_str(), &end);
      if (end != text.c_str() + text.size() - 1 || !(spec.timeout_factor >= 1e-3) || !(spec.timeout_factor <= 1e6))
        throw InputError(fmt::format("recovery.timeout: '{}' is not a time (\"50ms\") or a multiple of the "
                                     "model's collective time from 0.001x to 1e+06x (\"3x\")", text));
    } else {
      spec.timeout_is_factor = false;
      spec.timeout = get_quantity(timeout, "recovery.timeout", parse_time);
      if (spec.timeout <= 0) throw InputError("recovery.timeout: must be > 0");
    }
    spec.timeout_text = timeout.is_string() ? text : timeout.dump();
  }
  if (object.contains("min_timeout")) {
    spec.min_timeout = get_quantity(object["min_timeout"], "recovery.min_timeout", parse_time);
    if (*spec.min_timeout < 0) throw InputError("recovery.min_timeout: must be >= 0");
  }
  if (object.contains("min_workers")) {
    const json& value = object["min_workers"];
    if (!value.is_number_integer() || value.get<long long>() < 1 || value.get<long long>() > 1'000'000)
      throw InputError("recovery.min_workers: must be a whole number from 1 to 1000000");
    spec.min_workers = value.get<int>();
  }
  if (object.contains("straggler_threshold")) {
    const json& value = object["straggler_threshold"];
    if (!value.is_number() || !(value.get<double>() >= 0) || !(value.get<double>() < 1))
      throw InputError("recovery.straggler_threshold: must be a number >= 0 and < 1 (a ratio of the group's median "
                       "progress score; 0: no straggler by score)");
    spec.straggler_threshold = value.get<double>();
  }
  if (object.contains("straggler_window")) {
    const json& value = object["straggler_window"];
    if (!value.is_number_integer() || value.get<long long>() < 1 || value.get<long long>() > 1000000)
      throw InputError("recovery.straggler_window: must be a whole number of steps from 1 to 1000000");
    spec.straggler_window = value.get<int>();
  }
  return spec;
}

}  // namespace

json load_scenario_json(const std::string& path) {
  return parse_json(read_input_file(path, "scenario file"), path);
}

void set_path(json& document, const std::string& path, const json& value) {
  json* node = &document;
  std::stringstream stream(path);
  std::vector<std::string> keys;
  for (std::string key; std::getline(stream, key, '.');) keys.push_back(key);
  if (keys.empty() || std::any_of(keys.begin(), keys.end(), [](const std::string& k) { return k.empty(); }))
    throw InputError(fmt::format("--set: '{}' is not a key path such as collective.algorithm", path));
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool last = i + 1 == keys.size();
    if (node->is_array()) {
      size_t index = 0;
      try {
        index = std::stoul(keys[i]);
      } catch (const std::exception&) {
        throw InputError(fmt::format("--set: '{}' in '{}' must be an array index", keys[i], path));
      }
      if (index >= node->size())
        throw InputError(fmt::format("--set: index {} in '{}' is past the end ({} entries)", index, path, node->size()));
      node = &(*node)[index];
    } else {
      if (!node->is_object() && !node->is_null())
        throw InputError(fmt::format("--set: cannot set '{}': '{}' is not an object", path, keys[i - 1]));
      node = &(*node)[keys[i]];
    }
    if (last) *node = value;
  }
}

void apply_override(json& document, const std::string& assignment) {
  const auto equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0)
    throw InputError(fmt::format("--set: '{}' is not KEY.PATH=VALUE (example: --set collective.algorithm=naive)",
                                 assignment));
  const std::string text = assignment.substr(equals + 1);
  json value;
  try {
    value = parse_json(text, "--set " + assignment.substr(0, equals));
  } catch (const InputError&) {
    value = text;  // a bare word such as naive or 64MiB
  }
  set_path(document, assignment.substr(0, equals), value);
}

void check_servers(const CollectiveSpec& collective, int workers) {
  // server processes of their own (shared, dedicated) may outnumber the workers
  if (collective.servers && *collective.servers > workers && collective.parameter_server.placement == ServerPlacement::workers)
    throw InputError(fmt::format("collective.servers: {} servers for {} workers; allowed: 1 to {}", *collective.servers,
                                 workers, workers));
}

namespace {

// The run's identity and where it runs: name, description, topology, network, overhead, workers.
void parse_platform_fields(const json& document, const std::string& source_dir, Scenario& scenario) {
  if (document.contains("name")) scenario.name = get_label(document["name"], "name");
  if (document.contains("description")) {
    const json& description = document["description"];
    const bool lines = description.is_array() &&
                       std::all_of(description.begin(), description.end(), [](const json& line) { return line.is_string(); });
    if (!description.is_string() && !lines) throw InputError("description: must be a string or a list of strings");
  }
  if (document.contains("topology")) {
    scenario.topology = get_string(document["topology"], "topology");
    if (!parse_generator(scenario.topology, "topology"))
      resolve_platform_file(scenario.topology, source_dir, "topology");
  }
  if (document.contains("network"))
    scenario.network = parse_network_model(get_string(document["network"], "network"), "network");
  if (document.contains("message_overhead")) {
    scenario.message_overhead = get_quantity(document["message_overhead"], "message_overhead", parse_time);
    if (scenario.message_overhead < 0 || !std::isfinite(scenario.message_overhead))
      throw InputError("message_overhead: must be a time >= 0, e.g. \"1us\"");
  }
  if (document.contains("workers"))
    scenario.workers = static_cast<int>(get_integer(document["workers"], "workers", 1, 1'000'000));
}

// Layered training: the gradient is every layer's parameters, in the collective's dtype.
void fit_layers(const json& document, Scenario& scenario) {
  if (!scenario.training.has_layers()) return;
  // The gradient is every layer's parameters, in the collective's dtype; summed in
  // floating point, as 100000 layers of 2^50 parameters overflow a 64-bit count.
  double parameters = 0;
  for (const Layer& layer : scenario.training.layers) parameters += static_cast<double>(layer.parameters);
  const double bytes = parameters * static_cast<double>(dtype_size(scenario.collective.dtype));
  if (bytes > size_range.largest)
    throw InputError(fmt::format("training.layers: {:.4g} parameters of {} bytes make a {:.4g}-byte gradient; a size "
                                 "is at most 1 PiB ({:.0f} bytes)", parameters,
                                 dtype_size(scenario.collective.dtype), bytes, size_range.largest));
  const json& collective = document.contains("collective") ? document["collective"] : json::object();
  if (collective.contains("size") && scenario.collective.size != bytes)
    throw InputError(fmt::format("collective.size: {} bytes, but the layers hold {} parameters of {} bytes ({} bytes); "
                                 "leave it out", scenario.collective.size, total_parameters(scenario.training.layers),
                                 dtype_size(scenario.collective.dtype), bytes));
  scenario.collective.size = bytes;
  if (scenario.training.has_model()) scenario.training.gradient_size = bytes;
}

void check_sharding(const Scenario& scenario) {
  if (scenario.training.sharding == Sharding::none) return;
  if (scenario.collective.kind != Collective::allreduce)
    throw InputError("collective.kind: sharded training reduce-scatters and all-gathers the gradients of an allreduce");
  if (!allreduce_halves(scenario.collective.algorithm))
    throw InputError(fmt::format("training.sharding: collective.algorithm '{}' has no reduce-scatter and allgather "
                                 "halves to run apart; allowed: ring, rabenseifner", scenario.collective.algorithm));
}

// The faults, the recovery policy, and what each needs of the other.
void parse_faults_and_recovery(const json& document, Scenario& scenario) {
  if (document.contains("faults")) {
    if (!document["faults"].is_array()) throw InputError("faults: must be a list of faults");
    for (size_t i = 0; i < document["faults"].size(); ++i)
      scenario.faults.push_back(parse_fault(document["faults"][i], fmt::format("faults.{}", i), scenario.training.rounds));
  }
  if (document.contains("recovery")) scenario.recovery = parse_recovery(document["recovery"]);
  for (size_t i = 0; i < scenario.faults.size(); ++i)
    if (scenario.faults[i].return_after && scenario.recovery.policy != RecoveryPolicy::rebuild)
      throw InputError(fmt::format("faults.{}.return_after: a worker can only rejoin a group that is rebuilt; set "
                                   "recovery.policy to \"rebuild\"", i));
  if (scenario.training.sharding == Sharding::zero3 && scenario.recovery.policy == RecoveryPolicy::rebuild)
    throw InputError("recovery.policy: with training.sharding \"zero3\" each parameter lives on one worker only; a "
                     "rebuilt group would lose the dropped workers' shards: use \"none\" or zero2");
  if (scenario.training.streams > 1 && scenario.recovery.policy == RecoveryPolicy::rebuild)
    throw InputError("recovery.policy: \"rebuild\" watches one collective per worker at a time (its detector judges a "
                     "worker by the one transfer it waits on, and a rebuild restarts that one collective); with "
                     "training.streams above 1 use \"none\"");
}

// Training a model: workers average their gradients, the model's parameters carried whole.
void fit_model(const json& document, Scenario& scenario) {
  if (!scenario.training.has_model()) return;
  // Workers average their gradients: an allreduce with op avg.
  if (scenario.collective.kind != Collective::allreduce)
    throw InputError("collective.kind: training a model needs an allreduce of the gradients");
  const json& collective = document.contains("collective") ? document["collective"] : json::object();
  if (collective.contains("op") && scenario.collective.op != OpKind::avg)
    throw InputError("collective.op: training a model averages the gradients: use \"avg\" or leave it out");
  scenario.collective.op = OpKind::avg;
  if (scenario.collective.dtype != Dtype::float32 && scenario.collective.dtype != Dtype::float64)
    throw InputError("collective.dtype: training a model needs float32 or float64 gradients");
  if (scenario.training.gradient_size) scenario.collective.size = *scenario.training.gradient_size;
  const double smallest = static_cast<double>(scenario.training.parameters) * static_cast<double>(dtype_size(scenario.collective.dtype));
  if (scenario.collective.size < smallest)
    throw InputError(fmt::format("training.gradient_size: {} bytes is less than the model's {} parameters of {} "
                                 "bytes; the network must carry at least {} bytes",
                                 scenario.collective.size, scenario.training.parameters,
                                 dtype_size(scenario.collective.dtype), smallest));
  scenario.collective.carried_elements = static_cast<uint64_t>(scenario.training.parameters);
}

// How the run is set up: placement, SimGrid options, seed.
void parse_run_fields(const json& document, Scenario& scenario) {
  if (document.contains("placement")) {
    if (!document["placement"].is_array()) throw InputError("placement: must be a list of host names");
    if (document["placement"].empty())
      throw InputError("placement: the list is empty; list one host per worker, or leave the key out for ranks in host order");
    for (size_t i = 0; i < document["placement"].size(); ++i)
      scenario.placement.push_back(get_string(document["placement"][i], fmt::format("placement.{}", i)));
  }
  if (document.contains("cfg")) {
    if (!document["cfg"].is_array()) throw InputError("cfg: must be a list of \"KEY:VALUE\" SimGrid options");
    for (size_t i = 0; i < document["cfg"].size(); ++i) {
      scenario.cfg.push_back(get_string(document["cfg"][i], fmt::format("cfg.{}", i)));
      check_simgrid_option(scenario.cfg.back(), fmt::format("cfg.{}", i));
    }
  }
  if (document.contains("seed"))
    scenario.seed = static_cast<uint64_t>(get_integer(document["seed"], "seed", 0, std::numeric_limits<long long>::max()));

}

// A run split into tensor, pipeline, data and expert groups (docs/parallelism.md): the
// workers are the layout's, and what the parallel executor does not run yet is refused.
void fit_parallelism(const json& document, Scenario& scenario) {
  scenario.parallelism = parse_parallelism(document["parallelism"]);
  check_parallelism(scenario.parallelism, scenario.workers);
  scenario.workers = scenario.parallelism.workers();
  if (document.contains("collective"))
    throw InputError("collective: with parallelism each collective is given in parallelism.collectives; leave out "
                     "collective (and the flags that set it: --collective, --algorithm, --size, ...)");
  // read by the communicators that run NCCL's algorithms (and gpu_cost by collsim's own)
  if (document.contains("nccl")) scenario.nccl = parse_parallel_nccl_spec(document["nccl"], scenario.parallelism);
  if (document.contains("training"))
    throw InputError("training: not with parallelism yet (a parallel run is one step of its own: parallelism.step); leave "
                     "out training or parallelism");
  if (!scenario.parallelism.step.given && (document.contains("recovery") || !scenario.faults.empty()))
    throw InputError(fmt::format("{}: with parallelism, faults and recovery are a training step's "
                                 "(parallelism.step); leave them out of parallelism.collectives",
                                 document.contains("recovery") ? "recovery" : "faults"));
  for (size_t i = 0; i < scenario.faults.size(); ++i) check_step_fault(scenario, i);
}

// What one section alone cannot check: the root and servers against the workers, the
// placement's length; the default topology.
void check_across(Scenario& scenario) {
  check_asynchronous_servers(scenario);
  check_variable_placement(scenario);
  if (scenario.workers && scenario.collective.root >= *scenario.workers)
    throw InputError(fmt::format("collective.root: {} is not a rank; allowed: 0 to {}", scenario.collective.root,
                                 *scenario.workers - 1));
  if (scenario.workers) check_servers(scenario.collective, *scenario.workers);
  check_rebuilt_servers(scenario);
  if (!scenario.placement.empty() && scenario.workers &&
      static_cast<int>(scenario.placement.size()) != *scenario.workers)
    throw InputError(fmt::format("placement: {} host(s) listed for {} workers", scenario.placement.size(),
                                 *scenario.workers));
  if (scenario.topology.empty()) {
    const int workers = scenario.workers.value_or(8);
    scenario.workers = workers;
    scenario.topology = fmt::format("star:{}", workers);
  }
}

}  // namespace

Scenario parse_scenario(const json& document, const std::string& source_dir) {
  check_keys(document, "", {"name", "description", "topology", "network", "workers", "collective", "nccl", "training",
                            "placement", "cfg", "seed", "faults", "recovery", "message_overhead", "parallelism"});
  Scenario scenario;
  scenario.source_dir = source_dir;
  parse_platform_fields(document, source_dir, scenario);
  scenario.collective = parse_collective_spec(document.contains("collective") ? document["collective"] : json::object());
  if (document.contains("nccl") && !document.contains("parallelism"))
    scenario.nccl = parse_nccl_spec(document["nccl"], scenario.collective);
  if (document.contains("training")) scenario.training = parse_training(document["training"]);
  fit_layers(document, scenario);
  check_sharding(scenario);
  parse_faults_and_recovery(document, scenario);
  fit_model(document, scenario);
  parse_run_fields(document, scenario);
  if (document.contains("parallelism")) fit_parallelism(document, scenario);
  check_across(scenario);
  return scenario;
}

namespace {
// Whole numbers of bytes print as integers (1048576, not 1048576.0).
json bytes_json(double bytes) {
  if (bytes == std::floor(bytes) && bytes < 1.8e19) return static_cast<uint64_t>(bytes);
  return bytes;
}
}  // namespace

std::string_view fault_kind_name(FaultKind kind) { return fault_kinds().name(kind); }

json recovery_to_json(const RecoverySpec& r) {
  json out{{"policy", recovery_policies().name(r.policy)}, {"timeout", r.timeout_text},
           {"min_workers", r.min_workers}, {"straggler_threshold", r.straggler_threshold},
           {"straggler_window", r.straggler_window}};
  if (r.min_timeout) out["min_timeout"] = *r.min_timeout;
  return out;
}

json fault_to_json(const FaultSpec& f) {
  json out{{"kind", fault_kind_name(f.kind)}};
  if (f.at) out["at"] = *f.at;
  if (f.at_round) out["at_round"] = *f.at_round;
  if (!f.link.empty()) out["link"] = f.link;
  if (!f.host.empty()) out["host"] = f.host;
  if (f.rank) out["rank"] = *f.rank;
  if (f.kind == FaultKind::slow_link || f.kind == FaultKind::slow_host) out["factor"] = f.factor;
  if (f.latency) out["latency"] = *f.latency;
  if (f.duration) out["duration"] = *f.duration;
  if (f.return_after) out["return_after"] = *f.return_after;
  return out;
}

json noise_to_json(const NoiseSpec& noise) {
  json out{{"distribution", noise_distribution_names().name(noise.distribution)}};
  if (noise.distribution == NoiseDistribution::table) {
    out["table"] = json::array();
    for (const TailPoint& point : noise.table) out["table"].push_back({point.probability, point.factor});
  } else {
    out["sigma"] = noise.sigma;
  }
  return out;
}

json scenario_to_json(const Scenario& s, int workers, const std::string& topology) {
  json collective{{"kind", collective_name(s.collective.kind)},
                  {"algorithm", s.collective.algorithm},
                  {"size", bytes_json(s.collective.size)},
                  {"dtype", dtype_name(s.collective.dtype)},
                  {"op", op_name(s.collective.op)},
                  {"root", s.collective.root},
                  {"segment", bytes_json(s.collective.segment)}};
  if (s.collective.carried_elements) collective["carried_elements"] = *s.collective.carried_elements;
  if (s.collective.algorithm == "auto") collective["auto"] = s.collective.auto_by;
  // Recorded when given, and the servers of a parameter server always (the default 1 too).
  const bool serves = !chosen_at_run_time(s.collective.algorithm) &&
                      find_algorithm(s.collective.kind, s.collective.algorithm, "collective.algorithm").uses.servers;
  const ParameterServerSpec& deployment = s.collective.parameter_server;
  const bool counted = !deployment.hosts.empty() || deployment.per_node || deployment.ratio;  // S set there
  if ((s.collective.servers || serves) && !counted) collective["servers"] = s.collective.servers.value_or(1);
  if (s.collective.parameter_server.given) collective["parameter_server"] = parameter_server_json(s.collective.parameter_server);
  if (s.collective.group_size) collective["group_size"] = *s.collective.group_size;
  if (s.collective.channels > 1) collective["channels"] = s.collective.channels;
  if (s.collective.intra != HierarchyLevel::ring) collective["intra"] = hierarchy_level_names().name(s.collective.intra);
  if (s.collective.inter != HierarchyLevel::ring) collective["inter"] = hierarchy_level_names().name(s.collective.inter);
  if (s.collective.reduce_bandwidth) collective["reduce_bandwidth"] = fmt::format("{}Bps", *s.collective.reduce_bandwidth);
  // Written so that it reads back as a scenario: work in flops as "2e+09f".
  json training{{"rounds", s.training.rounds}, {"model", s.training.model}};
  if (s.training.has_layers()) {
    json layers = json::array();
    for (const Layer& layer : s.training.layers)
      layers.push_back({{"name", layer.name}, {"parameters", layer.parameters}, {"forward", layer.forward},
                        {"backward", layer.backward}});
    training["layers"] = layers;
    if (s.training.bucket > 0) training["bucket"] = bytes_json(s.training.bucket);
    if (s.training.sharding != Sharding::none) training["sharding"] = sharding_names().name(s.training.sharding);
    if (s.training.overlap != Overlap::backward) training["overlap"] = overlap_names().name(s.training.overlap);
    if (s.training.streams > 1) training["streams"] = s.training.streams;
    if (!s.training.replay) training["replay"] = false;
    if (s.training.fusion)
      training["fusion"] = {{"buffer", bytes_json(s.training.fusion->buffer)}, {"cycle", s.training.fusion->cycle}};
  } else {
    training["compute"] = s.training.compute_flops > 0 ? json(fmt::format("{}f", s.training.compute_flops))
                                                       : json(s.training.compute);
  }
  if (s.training.batch) training["batch"] = *s.training.batch;
  if (s.training.noise.active()) training["noise"] = noise_to_json(s.training.noise);
  if (s.training.launch_per_collective > 0 || s.training.launch_per_tensor > 0)
    training["launch"] = {{"per_collective", s.training.launch_per_collective}, {"per_tensor", s.training.launch_per_tensor}};
  if (s.training.has_model()) {
    training["parameters"] = s.training.parameters;
    training["samples"] = s.training.samples > 0 ? s.training.samples : 64 * workers;
    training["learning_rate"] = s.training.learning_rate;
    if (s.training.gradient_size && !s.training.has_layers()) training["gradient_size"] = bytes_json(*s.training.gradient_size);
  }
  json faults = json::array();
  for (const auto& f : s.faults) faults.push_back(fault_to_json(f));
  json out{{"name", s.name},
              {"topology", topology},
              {"network", network_model_name(s.network)},
              {"message_overhead", s.message_overhead},
              {"workers", workers},
              {"collective", collective},
              {"training", training},
              {"faults", faults},
              {"recovery", recovery_to_json(s.recovery)},
              {"placement", s.placement},
              {"cfg", s.cfg},
              {"seed", s.seed}};
  if (s.nccl.given || s.collective.algorithm == "nccl") out["nccl"] = nccl_spec_to_json(s.nccl);
  if (s.parallelism.given) out["parallelism"] = parallelism_to_json(s.parallelism);
  return out;
}

}  // namespace collsim
