// collective.parameter_server: where the servers of allreduce `parameter-server` run, how
// many there are, whether each node reduces inside first, and what a server's CPU costs.
#include <cmath>
#include <fmt/format.h>

#include "scenario/json_fields.hpp"
#include "scenario/scenario.hpp"
#include "scenario/server_checks.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

using nlohmann::json;

namespace collsim {

const NamedEnum<ServerPlacement>& server_placements() {
  static const NamedEnum<ServerPlacement> table{
      "placement",
      {{ServerPlacement::workers, "workers"}, {ServerPlacement::shared, "shared"}, {ServerPlacement::dedicated, "dedicated"}}};
  return table;
}

const NamedEnum<ServerMode>& server_modes() {
  static const NamedEnum<ServerMode> table{
      "mode",
      {{ServerMode::synchronous, "synchronous"}, {ServerMode::asynchronous, "asynchronous"}, {ServerMode::bounded, "bounded"}}};
  return table;
}

namespace {

std::vector<std::string> parse_server_hosts(const json& value) {
  const std::string field = "collective.parameter_server.hosts";
  if (!value.is_array() || value.empty())
    throw InputError(fmt::format("{}: must be a non-empty list of host names", field));
  std::vector<std::string> hosts;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string where = fmt::format("{}.{}", field, i);
    hosts.push_back(get_string(value[i], where));
    check_name(hosts.back(), where);
    for (size_t j = 0; j + 1 < hosts.size(); ++j)
      if (hosts[j] == hosts.back()) throw InputError(fmt::format("{}: host '{}' is listed twice", where, hosts.back()));
  }
  return hosts;
}

double parse_ratio(const json& value) {
  const std::string field = "collective.parameter_server.ratio";
  if (!value.is_number() || !(value.get<double>() > 0) || !(value.get<double>() <= 1e6))
    throw InputError(fmt::format("{}: must be a number of servers per worker above 0 (0.25 = one server for four "
                                 "workers), got {}",
                                 field, value.dump()));
  return value.get<double>();
}

// mode and staleness: when a server answers a pull.
void parse_server_mode(const json& object, ParameterServerSpec& spec) {
  const std::string where = "collective.parameter_server";
  if (object.contains("mode")) spec.mode = server_modes().parse(get_string(object["mode"], where + ".mode"), where + ".mode");
  if (object.contains("staleness")) {
    if (spec.mode != ServerMode::bounded)
      throw InputError(fmt::format("{}.staleness: bounds the staleness of mode \"bounded\" only; set mode to \"bounded\" "
                                   "or leave staleness out", where));
    spec.staleness = static_cast<int>(get_integer(object["staleness"], where + ".staleness", 0, 1'000'000));
  } else if (spec.mode == ServerMode::bounded) {
    throw InputError(fmt::format("{}.staleness: mode \"bounded\" needs the bound s, in iterations (0 is synchronous); "
                                 "allowed: 0 to 1000000", where));
  }
  if (spec.mode == ServerMode::synchronous) return;
  if (spec.placement == ServerPlacement::workers)
    throw InputError(fmt::format("{}.mode: {} servers apply each push as it arrives, in processes of their own; set "
                                 "placement to \"shared\" or \"dedicated\"", where, server_modes().name(spec.mode)));
}

}  // namespace

ParameterServerSpec parse_parameter_server(const json& object) {
  const std::string where = "collective.parameter_server";
  if (!object.is_object()) throw InputError(fmt::format("{}: must be an object", where));
  check_keys(object, where, {"placement", "hosts", "per_node", "ratio", "local_aggregation", "cpu_bandwidth",
                             "cpu_per_message", "mode", "staleness", "variables"});
  ParameterServerSpec spec;
  spec.given = true;
  if (object.contains("placement"))
    spec.placement = server_placements().parse(get_string(object["placement"], where + ".placement"), where + ".placement");
  if (object.contains("hosts")) spec.hosts = parse_server_hosts(object["hosts"]);
  if (object.contains("per_node"))
    spec.per_node = static_cast<int>(get_integer(object["per_node"], where + ".per_node", 1, 1'000'000));
  if (object.contains("ratio")) spec.ratio = parse_ratio(object["ratio"]);
  const int counts = object.contains("hosts") + object.contains("per_node") + object.contains("ratio");
  if (counts > 1)
    throw InputError(fmt::format("{}: give at most one of hosts, per_node and ratio (each sets the number of servers)",
                                 where));
  if ((spec.per_node || !spec.hosts.empty()) && spec.placement == ServerPlacement::workers)
    throw InputError(fmt::format("{}.{}: the servers of placement \"workers\" are ranks 0 to S-1; hosts and per_node "
                                 "place server processes: set placement to \"shared\" or \"dedicated\"",
                                 where, spec.per_node ? "per_node" : "hosts"));
  if (object.contains("local_aggregation")) {
    if (!object["local_aggregation"].is_boolean())
      throw InputError(fmt::format("{}.local_aggregation: must be true or false, got {}", where,
                                   object["local_aggregation"].dump()));
    spec.local_aggregation = object["local_aggregation"].get<bool>();
  }
  if (object.contains("cpu_bandwidth")) {
    const json& value = object["cpu_bandwidth"];
    if (!value.is_string())
      throw InputError(fmt::format("{}.cpu_bandwidth: must be a bandwidth with a unit such as \"10GBps\", got {}",
                                   where, value.dump()));
    spec.cpu_bandwidth = parse_bandwidth(value.get<std::string>(), where + ".cpu_bandwidth");
  }
  if (object.contains("cpu_per_message"))
    spec.cpu_per_message = get_quantity(object["cpu_per_message"], where + ".cpu_per_message", parse_time);
  parse_server_mode(object, spec);
  if (object.contains("variables")) {
    spec.variables = variable_placements().parse(get_string(object["variables"], where + ".variables"), where + ".variables");
    if (spec.variables != VariablePlacement::split && spec.mode != ServerMode::synchronous)
      throw InputError(fmt::format("{}.variables: whole variables are placed for synchronous servers only ({} servers "
                                   "keep even shards); leave variables out or set mode to \"synchronous\"",
                                   where, server_modes().name(spec.mode)));
  }
  return spec;
}

// Whole variables on servers: a model's tensors, placed once for the group the run starts with.
void check_variable_placement(const Scenario& scenario) {
  const std::string where = "collective.parameter_server.variables";
  const VariablePlacement how = scenario.collective.parameter_server.variables;
  if (how == VariablePlacement::split) return;
  if (!scenario.training.has_layers())
    throw InputError(fmt::format("{}: \"{}\" places the model's variables (its layers' tensors) whole on servers: give "
                                 "training.layers, or leave variables out (\"split\": even shards)",
                                 where, variable_placements().name(how)));
  if (scenario.recovery.policy == RecoveryPolicy::rebuild)
    throw InputError(fmt::format("{}: variables are placed on the servers the run starts with; recovery.policy "
                                 "\"rebuild\" regroups them: leave variables out (\"split\") with it", where));
}

// Asynchronous and bounded-staleness servers (collective.parameter_server.mode): each push
// (of the whole gradient, or of a bucket) is added to the servers' shards as it arrives.
// (training.sharding is refused for parameter-server in any mode: no reduce-scatter half.)
void check_asynchronous_servers(const Scenario& scenario) {
  const ServerMode mode = scenario.collective.parameter_server.mode;
  if (mode == ServerMode::synchronous) return;
  const TrainingSpec& training = scenario.training;
  const Dtype dtype = scenario.collective.dtype;
  if (dtype != Dtype::float32 && dtype != Dtype::float64 && dtype != Dtype::bfloat16 && dtype != Dtype::float16)
    throw InputError(fmt::format("collective.dtype: {} parameter servers add gradients up in floating point; allowed: "
                                 "float32, float64, bfloat16, float16", server_modes().name(mode)));
  if (!training.has_model() && scenario.collective.op != OpKind::sum)
    throw InputError(fmt::format("collective.op: {} parameter servers add each push to their shard as it arrives; "
                                 "allowed: sum", server_modes().name(mode)));
}

// Server processes serve the group of the moment: when a worker is lost, the coordinator
// tells them of the survivors' group, and they serve the round it resumes from; a worker
// that comes back joins at a round nobody has started, and they serve its group from that
// round on (sim/server_rebuilds.cpp). A slow worker's host is judged by its computation. A
// server's host preempted: the servers left take over its shard (the run stops when none
// is left; recovery/coordinator_servers.cpp). A link
// fault is refused: recovery would judge the transfers with a server across it, and a
// server is no member it could drop or keep.
void check_rebuilt_servers(const Scenario& scenario) {
  const ParameterServerSpec& spec = scenario.collective.parameter_server;
  if (spec.placement == ServerPlacement::workers || scenario.recovery.policy != RecoveryPolicy::rebuild) return;
  const std::string why = "with parameter server processes (placement \"shared\" or \"dedicated\"), recovery.policy "
                          "\"rebuild\" handles workers lost, slowed or coming back";
  if (spec.mode != ServerMode::synchronous)
    throw InputError(fmt::format("collective.parameter_server.mode: {} servers apply pushes as they arrive; {} with "
                                 "synchronous servers only: leave mode out, or recovery.policy \"none\"",
                                 server_modes().name(spec.mode), why));
  if (scenario.training.streams > 1)
    throw InputError(fmt::format("training.streams: {} streams; {} with one stream: set training.streams to 1",
                                 scenario.training.streams, why));
  for (size_t i = 0; i < scenario.faults.size(); ++i) {
    const FaultSpec& fault = scenario.faults[i];
    if (fault.kind == FaultKind::slow_link || fault.kind == FaultKind::link_down)
      throw InputError(fmt::format("faults.{}.kind: \"{}\"; {} (kinds \"preempt\" and \"slow-host\"): recovery "
                                   "would judge the transfers with a server across the link, and a server is no "
                                   "member it could drop or keep; recovery.policy \"none\" runs it",
                                   i, fault_kind_name(fault.kind), why));
  }
}

json parameter_server_json(const ParameterServerSpec& spec) {
  json out{{"placement", server_placements().name(spec.placement)}, {"local_aggregation", spec.local_aggregation}};
  if (!spec.hosts.empty()) out["hosts"] = spec.hosts;
  if (spec.per_node) out["per_node"] = *spec.per_node;
  if (spec.ratio) out["ratio"] = *spec.ratio;
  if (spec.cpu_bandwidth > 0) out["cpu_bandwidth"] = fmt::format("{}Bps", spec.cpu_bandwidth);
  out["cpu_per_message"] = spec.cpu_per_message;
  if (spec.mode != ServerMode::synchronous) out["mode"] = server_modes().name(spec.mode);
  if (spec.mode == ServerMode::bounded) out["staleness"] = spec.staleness;
  if (spec.variables != VariablePlacement::split) out["variables"] = variable_placements().name(spec.variables);
  return out;
}

}  // namespace collsim
