#include "plan/nccl_run.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <simgrid/s4u/Host.hpp>

#include "algorithms/registry.hpp"
#include "model/route_cache.hpp"
#include "util/units.hpp"

namespace collsim {

bool runs_nccl(const Scenario& scenario) {
  const std::string& name = scenario.collective.algorithm;
  if (name == "auto") return false;
  return name == "nccl" || find_algorithm(scenario.collective.kind, name, "collective.algorithm").uses.nccl;
}

namespace {

std::string property(const simgrid::s4u::Host* host, const char* key) {
  const char* value = host->get_property(key);
  return value == nullptr ? "" : value;
}

nccl::GpuSystem describe_ranks(const std::vector<simgrid::s4u::Host*>& hosts,
                               const std::vector<simgrid::s4u::Host*>& switches, const RouteCache& routes) {
  std::vector<nccl::RankProperties> ranks;
  for (const simgrid::s4u::Host* host : hosts)
    ranks.push_back({property(host, "node"), property(host, "gpu"), property(host, "nic"), property(host, "cpu")});
  std::vector<std::string> roles;
  for (const simgrid::s4u::Host* host : switches) roles.push_back(property(host, "role"));
  // NVLink as built: the bottleneck of the route between two GPUs of the first node
  double nvlink = 0;
  for (size_t r = 1; r < hosts.size() && nvlink == 0; ++r)
    if (!ranks[r].node.empty() && ranks[r].node == ranks[0].node)
      for (int link : routes.route(0, static_cast<int>(r)).links)
        nvlink = nvlink == 0 ? routes.link(link).bandwidth : std::min(nvlink, routes.link(link).bandwidth);
  return nccl::describe_system(ranks, nvlink, roles, "collective.algorithm");
}

// What each endpoint is: the ranks' GPUs, then the switches by role.
std::vector<nccl::EndpointKind> endpoint_kinds(size_t ranks, const std::vector<simgrid::s4u::Host*>& switches) {
  std::vector<nccl::EndpointKind> kinds(ranks, nccl::EndpointKind::gpu);
  for (const simgrid::s4u::Host* host : switches)
    kinds.push_back(property(host, "role") == "nvswitch" ? nccl::EndpointKind::nvswitch : nccl::EndpointKind::sharp_switch);
  return kinds;
}

// The messages a rank keeps in flight at once, which share its per-channel ceilings: one per
// ring, one per tree.
int lanes_of(const nccl::Choice& choice, const nccl::Forced& forced) {
  if (choice.chosen.algo == nccl::Algo::tree) return 2;
  if (choice.chosen.algo != nccl::Algo::ring) return 1;
  // the channels of one search channel follow the same ring: one simulated ring each
  return forced.channels ? *forced.channels : std::min(choice.channels, choice.graph.channels);
}

}  // namespace

NcclSetup setup_nccl(const Scenario& scenario, const std::string& algorithm, const std::vector<simgrid::s4u::Host*>& hosts,
                     const std::vector<simgrid::s4u::Host*>& switches, std::shared_ptr<const RouteCache> routes,
                     double bytes) {
  NcclSetup setup;
  setup.system = describe_ranks(hosts, switches, *routes);
  nccl::Forced forced{scenario.nccl.algo, scenario.nccl.proto, scenario.nccl.channels, {}};
  for (const std::string& name : nccl_algorithm_names(scenario.collective.kind))
    if (const auto algo = nccl::algo_of(name)) forced.runnable.push_back(*algo);
  if (const auto named = nccl::algo_of(algorithm)) forced.algo = named;
  setup.choice = nccl::choose_allreduce(setup.system, bytes, forced, forced.algo ? "nccl.algo" : "collective.algorithm");
  setup.algorithm = nccl::registry_name(setup.choice.chosen.algo);
  setup.lanes = lanes_of(setup.choice, forced);
  const nccl::TransportChoice transport{setup.choice.chosen.algo, setup.choice.chosen.proto, setup.choice.channels,
                                        setup.lanes};
  setup.transport =
      std::make_shared<const nccl::Transport>(setup.system, transport, endpoint_kinds(hosts.size(), switches));
  return setup;
}

std::string describe_nccl(const NcclSetup& setup) {
  const nccl::Transport& t = *setup.transport;
  return fmt::format("NCCL's transport for {}/{}: {} base latency per collective, hops of {} on NVLink and {} across "
                     "nodes (NCCL's hwLat, in place of the links' latencies), {:.4g} wire bytes per byte on NVLink, {:.4g} "
                     "across nodes",
                     nccl::algo_name(setup.choice.chosen.algo), nccl::proto_name(setup.choice.chosen.proto),
                     format_time(t.collective_overhead()), format_time(t.hop_latency(nccl::Hw::nvlink)),
                     format_time(t.hop_latency(nccl::Hw::net)),
                     t.wire_factor(nccl::EndpointKind::gpu, nccl::EndpointKind::gpu, true),
                     t.wire_factor(nccl::EndpointKind::gpu, nccl::EndpointKind::gpu, false));
}

}  // namespace collsim
