#include "parallel/group_switches.hpp"

#include <fmt/format.h>
#include <map>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include "algorithms/hierarchy.hpp"
#include "comm/comm.hpp"
#include "comm/comm_group.hpp"
#include "model/route_cache.hpp"
#include "sim/guarded.hpp"
#include "util/errors.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

namespace {

std::string property_of(const sg4::Host* host, const char* key) {
  const char* value = host->get_property(key);
  return value == nullptr ? std::string() : std::string(value);
}

// The switch of `kind` serving `serves` (its endpoint), or -1.
int find_switch(const RunSwitches& run, nccl::EndpointKind kind, const std::string& serves) {
  for (size_t s = 0; s < run.switches.size(); ++s)
    if (run.switches[s].kind == kind && run.switches[s].serves == serves) return run.workers + static_cast<int>(s);
  return -1;
}

// The group ranks of each node the group spans, in the order its algorithm numbers the nodes
// (locality_groups of the members' localities: nvls_plan.hpp, collnet_plan.hpp).
std::vector<std::vector<int>> nodes_of(const std::vector<int>& members, const std::vector<int>& world_localities) {
  std::vector<int> locality;
  for (int world : members) locality.push_back(world_localities[static_cast<size_t>(world)]);
  return locality_groups(locality);
}

// The ports and hosts of `algo`'s switches for the group, or why there are none.
GroupSwitches plan_switches(const RunSwitches& run, nccl::Algo algo, const std::vector<int>& members,
                            const std::vector<int>& world_localities, std::string& missing) {
  GroupSwitches out;
  if (!nccl::reduces_in_switch(algo) || members.size() < 2) return out;
  const auto nodes = nodes_of(members, world_localities);
  auto add = [&](SwitchKind kind, int endpoint, std::vector<int> served) {
    out.ports.push_back({kind, endpoint, std::move(served)});
    out.hosts.push_back(run.switches[static_cast<size_t>(endpoint - run.workers)].host);
  };
  if (!nccl::is_collnet(algo)) {
    // NVLS: each node's reductions, then each node's multicasts (nvls_rounds.hpp), on its NVSwitch
    std::vector<int> endpoints;
    for (const auto& node : nodes) {
      const std::string& name = run.rank_node[static_cast<size_t>(members[static_cast<size_t>(node.front())])];
      const int endpoint = find_switch(run, nccl::EndpointKind::nvswitch, name);
      if (endpoint < 0) {
        missing = fmt::format("the platform has no NVSwitch that reduces for node '{}'", name);
        return {};
      }
      endpoints.push_back(endpoint);
    }
    for (int role = 0; role < 2; ++role)
      for (size_t n = 0; n < nodes.size(); ++n) add(SwitchKind::nvlink, endpoints[n], nodes[n]);
    return out;
  }
  // CollNet: member i of every node on one rail, whose SHARP switch serves them (collnet_plan.hpp)
  size_t most = 0;
  for (const auto& node : nodes) most = std::max(most, node.size());
  for (size_t i = 0; i < most; ++i) {
    std::vector<int> served;
    std::string rail;
    for (const auto& node : nodes) {
      if (i >= node.size()) continue;
      const int rank = node[i];
      const std::string& on = run.rank_rail[static_cast<size_t>(members[static_cast<size_t>(rank)])];
      if (!rail.empty() && on != rail) {
        missing = fmt::format("GPU {} of each of its nodes is not on one rail ('{}' and '{}'): no one SHARP switch "
                              "serves them", i, rail, on);
        return {};
      }
      rail = on;
      served.push_back(rank);
    }
    std::sort(served.begin(), served.end());
    const int endpoint = find_switch(run, nccl::EndpointKind::sharp_switch, rail);
    if (endpoint < 0) {
      missing = fmt::format("the platform has no SHARP switch for rail '{}'", rail);
      return {};
    }
    add(SwitchKind::network, endpoint, std::move(served));
  }
  return out;
}

}  // namespace

RunSwitches run_switches(const RunPlan& plan) {
  RunSwitches run;
  run.workers = plan.workers;
  if (!sg4::Engine::is_initialized()) return run;
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  for (const std::string& name : plan.rank_hosts) {
    const sg4::Host* host = engine.host_by_name_or_null(name);
    run.rank_node.push_back(host == nullptr ? "" : property_of(host, "node"));
    run.rank_rail.push_back(host == nullptr ? "" : property_of(host, "rail"));
  }
  for (const sg4::Host* host : engine.get_all_hosts()) {
    const std::string role = property_of(host, "role");
    if (role.empty()) continue;
    // (every host with a role is an endpoint, as run_gpu_system lists them to NCCL's system)
    const bool sharp = role == "sharp-switch";
    run.switches.push_back({host->get_name(), sharp ? nccl::EndpointKind::sharp_switch : nccl::EndpointKind::nvswitch,
                            property_of(host, sharp ? "rail" : "node")});
  }
  return run;
}

std::vector<nccl::EndpointKind> endpoint_kinds(const RunSwitches& run) {
  std::vector<nccl::EndpointKind> kinds(static_cast<size_t>(run.workers), nccl::EndpointKind::gpu);
  for (const ReducingSwitch& s : run.switches) kinds.push_back(s.kind);
  return kinds;
}

std::shared_ptr<const Network> network_with_switches(const RunPlan& plan) {
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  std::vector<sg4::Host*> hosts, extra;
  for (const std::string& name : plan.rank_hosts) hosts.push_back(engine.host_by_name(name));
  for (const ReducingSwitch& s : run_switches(plan).switches) extra.push_back(engine.host_by_name(s.host));
  return std::make_shared<const RouteCache>(std::move(hosts), std::move(extra));
}

GroupSwitches group_switches(const RunSwitches& run, nccl::Algo algo, const std::vector<int>& members,
                             const std::vector<int>& world_localities, const std::string& where) {
  std::string missing;
  GroupSwitches out = plan_switches(run, algo, members, world_localities, missing);
  if (!missing.empty())
    throw InputError(fmt::format("{}: NCCL's {} reduces in switches, and for the group of ranks {}..{} {}", where,
                                 nccl::algo_name(algo), members.front(), members.back(), missing));
  return out;
}

std::string switches_missing(const RunSwitches& run, nccl::Algo algo, const std::vector<int>& members,
                             const std::vector<int>& world_localities) {
  std::string missing;
  plan_switches(run, algo, members, world_localities, missing);
  return missing;
}

void start_switch_sides(const std::shared_ptr<CommGroup>& group, const std::vector<std::string>& hosts, int tag,
                        AlgorithmFn side, Dtype dtype, size_t carried, size_t logical, const CollectiveArgs& args,
                        std::exception_ptr& failure) {
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  for (size_t s = 0; s < hosts.size(); ++s) {
    const int rank = group->size() + static_cast<int>(s);
    // a daemon: a group whose ranks leave (a lost replica) leaves its switches waiting
    sg4::Actor::create(fmt::format("switch-{}-of-{}", s, group->world_rank(0)), engine.host_by_name(hosts[s]),
                       [group, rank, tag, side, dtype, carried, logical, args, &failure] {
                         guarded(failure, [&] {
                           Comm comm(*group, rank, tag);
                           Buffer data(dtype, carried, logical);
                           side(comm, data, args);
                         });
                       })
        ->daemonize();
  }
}

}  // namespace collsim
