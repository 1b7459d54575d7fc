#include "plan/server_plan.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "algorithms/hierarchy.hpp"
#include "model/route_cache.hpp"
#include "util/errors.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

const std::string field = "collective.parameter_server";

bool holds_rank(const std::vector<sg4::Host*>& hosts, const sg4::Host* host) {
  return std::find(hosts.begin(), hosts.end(), host) != hosts.end();
}

// The platform's hosts that hold no rank, in platform order.
std::vector<sg4::Host*> free_hosts(const RunPlan& plan, const std::vector<sg4::Host*>& hosts) {
  std::vector<sg4::Host*> free;
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  for (const std::string& name : plan.platform.hosts)
    if (sg4::Host* host = engine.host_by_name(name); !holds_rank(hosts, host)) free.push_back(host);
  return free;
}

// The hosts a list names: each a worker's (shared) or none's (dedicated).
std::vector<sg4::Host*> listed_hosts(const ParameterServerSpec& spec, const std::vector<sg4::Host*>& hosts) {
  std::vector<sg4::Host*> servers;
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  for (size_t i = 0; i < spec.hosts.size(); ++i) {
    const std::string where = fmt::format("{}.hosts.{}", field, i);
    sg4::Host* host = engine.host_by_name_or_null(spec.hosts[i]);
    if (host == nullptr) throw InputError(fmt::format("{}: no host '{}' on this platform", where, spec.hosts[i]));
    const bool worker = holds_rank(hosts, host);
    if (spec.placement == ServerPlacement::shared && !worker)
      throw InputError(fmt::format("{}: host '{}' runs no worker; placement \"shared\" puts each server beside a "
                                   "worker (\"dedicated\" takes hosts of their own)", where, spec.hosts[i]));
    if (spec.placement == ServerPlacement::dedicated && worker)
      throw InputError(fmt::format("{}: host '{}' runs a worker; placement \"dedicated\" takes hosts no worker uses "
                                   "(\"shared\" puts servers beside workers)", where, spec.hosts[i]));
    servers.push_back(host);
  }
  return servers;
}

// per_node servers in each node (a locality group of the ranks): beside its first workers
// (shared), or on the first hosts of its zone that run no worker (dedicated).
std::vector<sg4::Host*> hosts_per_node(const ParameterServerSpec& spec, const RunPlan& plan,
                                       const std::vector<sg4::Host*>& hosts, const RankLocality& locality) {
  const auto k = static_cast<size_t>(*spec.per_node);
  const std::vector<sg4::Host*> free = free_hosts(plan, hosts);
  std::vector<sg4::Host*> servers;
  for (const auto& node : locality_groups(locality.ids)) {
    std::vector<sg4::Host*> room;
    if (spec.placement == ServerPlacement::shared) {
      for (int r : node) room.push_back(hosts[static_cast<size_t>(r)]);
    } else {
      const sg4::NetZone* zone = hosts[static_cast<size_t>(node.front())]->get_englobing_zone();
      for (sg4::Host* host : free)
        if (host->get_englobing_zone() == zone) room.push_back(host);
    }
    if (room.size() < k)
      throw InputError(fmt::format("{}.per_node: {} servers per node, but the node of rank {} has only {} {}", field,
                                   k, node.front(), room.size(),
                                   spec.placement == ServerPlacement::shared ? "workers" : "hosts without a worker"));
    servers.insert(servers.end(), room.begin(), room.begin() + static_cast<long>(k));
  }
  return servers;
}

// S servers' hosts without a list: beside ranks 0 .. S-1 (shared), or the first S hosts
// that run no worker (dedicated).
std::vector<sg4::Host*> first_hosts(const ParameterServerSpec& spec, int servers, const RunPlan& plan,
                                    const std::vector<sg4::Host*>& hosts) {
  const std::vector<sg4::Host*> room = spec.placement == ServerPlacement::shared ? hosts : free_hosts(plan, hosts);
  if (static_cast<int>(room.size()) < servers)
    throw InputError(fmt::format("collective.servers: {} servers {}, but the platform has {}; allowed: 1 to {}",
                                 servers,
                                 spec.placement == ServerPlacement::shared ? "beside the workers" : "on hosts of their own",
                                 spec.placement == ServerPlacement::shared ? fmt::format("{} workers", room.size())
                                                                           : fmt::format("{} hosts without a worker", room.size()),
                                 room.size()));
  return {room.begin(), room.begin() + servers};
}

// The servers' count without a list or per_node: collective.servers, or the ratio of the workers.
int server_count(const Scenario& scenario, int p) {
  const ParameterServerSpec& spec = scenario.collective.parameter_server;
  if (!spec.ratio) return scenario.collective.servers.value_or(1);
  const int servers = std::max(1, static_cast<int>(std::lround(*spec.ratio * p)));
  return spec.placement == ServerPlacement::workers ? std::min(servers, p) : servers;
}

}  // namespace

void plan_servers(const std::vector<sg4::Host*>& hosts, const RankLocality& locality, RunPlan& plan) {
  const ParameterServerSpec& spec = plan.scenario.collective.parameter_server;
  ModelInput& model = plan.model;
  const int p = static_cast<int>(hosts.size());
  ServerDeployment& deployment = model.deployment;
  deployment.processes = spec.placement != ServerPlacement::workers;
  deployment.local_aggregation = spec.local_aggregation;
  deployment.cpu_per_byte = spec.cpu_bandwidth > 0 ? 1 / spec.cpu_bandwidth : 0;
  deployment.cpu_per_message = spec.cpu_per_message;
  deployment.asynchronous = spec.mode != ServerMode::synchronous;
  deployment.staleness = spec.mode == ServerMode::bounded ? spec.staleness : -1;
  deployment.pieces = nullptr;  // (collective.parameter_server.variables: per bucket, plan/planner.cpp)
  if (spec.local_aggregation) model.locality = locality.ids;
  model.servers = server_count(plan.scenario, p);
  if (spec.placement == ServerPlacement::workers) return;
  std::vector<sg4::Host*> servers = !spec.hosts.empty() ? listed_hosts(spec, hosts)
                                    : spec.per_node     ? hosts_per_node(spec, plan, hosts, locality)
                                                        : first_hosts(spec, model.servers, plan, hosts);
  model.servers = static_cast<int>(servers.size());
  model.network = std::make_shared<const RouteCache>(hosts, servers);
  std::vector<int> everyone(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) everyone[static_cast<size_t>(r)] = r;
  for (size_t s = 0; s < servers.size(); ++s) {
    const int endpoint = p + static_cast<int>(s);
    model.switch_endpoints.push_back(endpoint);
    plan.switches.push_back({servers[s]->get_name(), SwitchKind::server, everyone, endpoint});
  }
}

RankPairs server_process_partners(const ModelInput& model) {
  RankPairs pairs;
  for (int s = 0; s < model.servers; ++s)
    for (int r = 0; r < model.p; ++r) pairs.emplace_back(model.p + s, r);
  return pairs;
}

nlohmann::json server_parameters(const RunPlan& plan) {
  const ParameterServerSpec& spec = plan.scenario.collective.parameter_server;
  const ServerDeployment& deployment = plan.model.deployment;
  nlohmann::json hosts = nlohmann::json::array();
  for (const SwitchPlan& server : plan.switches)
    if (server.kind == SwitchKind::server) hosts.push_back(server.host);
  nlohmann::json parameters{{"placement", server_placements().name(spec.placement)},
          {"hosts", hosts},
          {"local_aggregation", deployment.local_aggregation},
          {"cpu_per_byte", deployment.cpu_per_byte},
          {"cpu_per_message", deployment.cpu_per_message}};
  if (spec.variables != VariablePlacement::split) {
    // each server's elements of the whole model: the sum of the variables placed on it
    parameters["variables"] = variable_placements().name(spec.variables);
    const std::vector<Layer>& layers = plan.scenario.training.layers;
    const std::vector<uint64_t> sizes = model_variables(layers);
    const std::vector<int> server_of = place_variables(layers, spec.variables, plan.model.servers);
    std::vector<uint64_t> loads(static_cast<size_t>(plan.model.servers), 0);
    for (size_t v = 0; v < sizes.size(); ++v) loads[static_cast<size_t>(server_of[v])] += sizes[v];
    parameters["server_elements"] = loads;
  }
  if (deployment.asynchronous) {
    parameters["mode"] = server_modes().name(spec.mode);
    if (deployment.staleness >= 0) parameters["staleness"] = deployment.staleness;
  }
  return parameters;
}

}  // namespace collsim
