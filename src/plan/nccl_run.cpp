#include "plan/nccl_run.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <unordered_map>

#include "algorithms/message_counts.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/schedule.hpp"
#include "nccl/p2p.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace collsim {

bool runs_nccl(const Scenario& scenario) {
  const std::string& name = scenario.collective.algorithm;
  if (name == "auto") return false;
  return name == "nccl" || find_algorithm(scenario.collective.kind, name, "collective.algorithm").uses.nccl;
}

bool runs_nvls_level(const Scenario& scenario) {
  return scenario.collective.intra == HierarchyLevel::nvls && scenario.collective.algorithm == "hierarchical";
}

bool wants_gpu_transport(const Scenario& scenario) {
  const std::string& name = scenario.collective.algorithm;
  if (!scenario.nccl.gpu_cost || runs_nccl(scenario)) return false;
  return name == "auto" || !find_algorithm(scenario.collective.kind, name, "collective.algorithm").uses.servers;
}

namespace {

std::string property(const PlatformHost& host, const char* key) { return host.property(key); }

nccl::GpuSystem describe_ranks(const std::vector<PlatformHost>& hosts, const std::vector<PlatformHost>& switches,
                               const Network& routes, const std::string& field = "collective.algorithm") {
  std::vector<nccl::RankProperties> ranks;
  for (const PlatformHost& host : hosts)
    ranks.push_back({property(host, "node"), property(host, "gpu"), property(host, "nic"), property(host, "cpu")});
  std::vector<std::string> roles;
  for (const PlatformHost& host : switches) roles.push_back(property(host, "role"));
  // NVLink as built: the bottleneck of the route between two GPUs of the first node
  double nvlink = 0;
  for (size_t r = 1; r < hosts.size() && nvlink == 0; ++r)
    if (!ranks[r].node.empty() && ranks[r].node == ranks[0].node)
      for (int link : routes.route(0, static_cast<int>(r)).links)
        nvlink = nvlink == 0 ? routes.link(link).bandwidth : std::min(nvlink, routes.link(link).bandwidth);
  return nccl::describe_system(ranks, nvlink, roles, field);
}

// The switches an algorithm reduces in, as endpoints after the ranks', and the ranks each
// serves. NVLS: each node's NVSwitch, in the locality groups' order (switch s serves group s:
// nvls_plan.hpp counts on it). CollNet: the rails' SHARP switches, rail i's serving GPU i of
// every node (collnet_plan.hpp counts on it), rails 0 .. ppn-1.
void add_switches(NcclSetup& setup, const std::vector<PlatformHost>& hosts, const std::vector<PlatformHost>& switches) {
  const nccl::Algo algo = setup.choice.chosen.algo;
  if (!nccl::reduces_in_switch(algo)) return;
  // one rank: NCCL sends nothing, and a switch actor would wait for pushes that never come
  // (SimGrid then reports a deadlock at the end of a run that succeeded)
  if (hosts.size() <= 1) return;
  const bool collnet = nccl::is_collnet(algo);
  const nccl::GpuSystem& system = setup.system;
  // each switch's ranks in rank order, in one pass (16,384 nodes: a pass per node took seconds)
  std::vector<std::vector<int>> members(static_cast<size_t>(collnet ? system.max_ppn : system.nodes));
  std::vector<int> seen(static_cast<size_t>(system.nodes), 0);
  for (size_t r = 0; r < hosts.size(); ++r) {
    const int node = system.node_of[r], member = seen[static_cast<size_t>(node)]++;
    members[static_cast<size_t>(collnet ? member : node)].push_back(static_cast<int>(r));
  }
  const char* role = collnet ? "sharp-switch" : "nvswitch";
  const char* serves = collnet ? "rail" : "node";
  std::unordered_map<std::string, const PlatformHost*> by_served;  // the first of each, as a search would find it
  for (const PlatformHost& h : switches)
    if (property(h, "role") == role) by_served.emplace(property(h, serves), &h);
  for (size_t s = 0; s < members.size(); ++s) {
    const std::string wanted = collnet ? std::to_string(s) : property(hosts[static_cast<size_t>(members[s].front())], "node");
    for (int r : members[s])
      if (property(hosts[static_cast<size_t>(r)], serves) != wanted)
        throw InputError(fmt::format("collective.algorithm: NCCL's {} here needs GPU i of every node on rail i; "
                                     "{} is GPU {} of its node on rail '{}'", nccl::algo_name(algo),
                                     hosts[static_cast<size_t>(r)].name, s, property(hosts[static_cast<size_t>(r)], serves)));
    const auto host = by_served.find(wanted);
    if (host == by_served.end())
      throw InputError(fmt::format("collective.algorithm: NCCL's {} reduces in a {} for {} '{}', and the platform has "
                                   "none", nccl::algo_name(algo), role, serves, wanted));
    setup.switches.push_back(*host->second);
    setup.switch_members.push_back(std::move(members[s]));
  }
  setup.switch_kind = collnet ? SwitchKind::network : SwitchKind::nvlink;
  setup.actors_per_switch = collnet ? 1 : 2;  // NVLS: its reductions, then its multicasts (nvls_rounds.hpp)
}

// The messages a rank keeps in flight at once, which share its per-channel ceilings: one per
// ring; per tree lane (half the lanes on each tree, each lane's chains headed by another GPU).
int lanes_of(const nccl::Choice& choice, const nccl::Forced& forced) {
  const nccl::Algo algo = choice.chosen.algo;
  if (algo == nccl::Algo::nvls || algo == nccl::Algo::nvls_tree || algo == nccl::Algo::collnet_direct) return 1;
  // the channels of one search channel follow the same ring: one simulated ring each
  const int channels = forced.channels ? *forced.channels : choice.channels;
  return std::min(channels, (algo == nccl::Algo::tree ? 2 : 1) * choice.graph.channels);
}

// What one step of a lane moves, logical bytes: NCCL's chunk per channel for this size, times
// the channels a lane stands for (NVLS: every channel's chunk of the vector at once;
// CollNetDirect: every channel's chunk for every head, NCCL's loop of nChannels x nHeads chunks).
double chunk_of(const nccl::Choice& choice, int lanes, const nccl::GpuSystem& system, double bytes) {
  const double chunk = nccl::pipeline_chunk_bytes(choice.chosen.algo, choice.chosen.proto, bytes, choice.channels,
                                                  system.ranks, system.nodes);
  const int heads = choice.chosen.algo == nccl::Algo::collnet_direct ? system.ppn : 1;
  return chunk * std::max(1, choice.channels / std::max(1, lanes)) * heads;
}

void refuse_what_switches_cannot_follow(const Scenario& scenario, const nccl::Choice& choice) {
  const nccl::Algo algo = choice.chosen.algo;
  if (!nccl::reduces_in_switch(algo)) return;
  // (with training.layers they run each bucket's, on its tag with training.streams: sim/simulation.cpp)
  if (scenario.recovery.policy != RecoveryPolicy::none)
    throw InputError(fmt::format("collective.algorithm: NCCL's {} reduces in its switches, whose actors do not "
                                 "follow a regrouping: not with recovery; force another with nccl.algo",
                                 nccl::algo_name(algo)));
}

// NCCL's alltoall: point to point on its p2p channels (nccl/p2p.hpp), no tuner.
NcclSetup setup_alltoall(const Scenario& scenario, nccl::GpuSystem system, double bytes) {
  NcclSetup setup;
  setup.system = std::move(system);
  const int channels = scenario.nccl.channels.value_or(nccl::communicator_channels(setup.system));
  const nccl::P2pPlan plan = nccl::plan_alltoall(setup.system, channels, bytes);
  setup.algorithm = "nccl-alltoall";
  setup.algo_label = "P2P";
  setup.choice.chosen.algo = nccl::Algo::ring;
  setup.choice.chosen.proto = plan.proto;
  setup.choice.channels = plan.parts;
  setup.choice.why = plan.why;
  setup.lanes = plan.parts;
  setup.fifo = plan.peers_at_once;
  setup.chunk_bytes = plan.step_bytes;
  const nccl::TransportChoice transport{.algo = nccl::Algo::ring, .proto = plan.proto, .channels = plan.parts,
                                        .messages_at_once = plan.parts, .point_to_point = true};
  setup.transport = std::make_shared<const nccl::Transport>(
      setup.system, transport, std::vector<nccl::EndpointKind>(static_cast<size_t>(setup.system.ranks), nccl::EndpointKind::gpu));
  return setup;
}

}  // namespace

NcclSetup setup_nccl(const Scenario& scenario, const std::string& algorithm, const std::vector<PlatformHost>& hosts,
                     const std::vector<PlatformHost>& switches, const Network& routes, double bytes) {
  if (scenario.collective.reduce_bandwidth)
    throw InputError("collective.reduce_bandwidth: NCCL's algorithms reduce as NCCL's kernels do, at the cost of their "
                     "transport (docs/nccl.md): leave it out");
  if (scenario.collective.kind == Collective::alltoall)
    return setup_alltoall(scenario, describe_ranks(hosts, switches, routes), bytes);
  nccl::Forced forced;
  forced.algo = scenario.nccl.algo;
  forced.proto = scenario.nccl.proto;
  forced.channels = scenario.nccl.channels;
  for (const std::string& name : nccl_algorithm_names(scenario.collective.kind))
    if (const auto algo = nccl::algo_of(name)) forced.runnable.push_back(*algo);
  if (const auto named = nccl::algo_of(algorithm)) forced.algo = named;
  // the switches' actors do not follow a regrouping: the tuner's choice passes over NVLS, NVLSTree
  // and CollNet with recovery (named, they are refused: refuse_what_switches_cannot_follow)
  if (!forced.algo && scenario.recovery.policy != RecoveryPolicy::none)
    for (const nccl::Algo algo : nccl::all_algos())
      if (nccl::reduces_in_switch(algo)) forced.set_aside.push_back({algo, "its switches do not follow a regrouping: not with recovery"});
  NcclSetup setup = choose_nccl_allreduce(describe_ranks(hosts, switches, routes), forced, bytes,
                                          forced.algo ? "nccl.algo" : "collective.algorithm");
  refuse_what_switches_cannot_follow(scenario, setup.choice);
  add_switches(setup, hosts, switches);
  const nccl::TransportChoice transport{.algo = setup.choice.chosen.algo, .proto = setup.choice.chosen.proto,
                                        .channels = setup.choice.channels, .messages_at_once = setup.lanes,
                                        .point_to_point = false};
  std::vector<nccl::EndpointKind> kinds(hosts.size(), nccl::EndpointKind::gpu);
  kinds.resize(hosts.size() + setup.switches.size(), setup.switch_kind == SwitchKind::network
                                                        ? nccl::EndpointKind::sharp_switch : nccl::EndpointKind::nvswitch);
  setup.transport = std::make_shared<const nccl::Transport>(setup.system, transport, kinds);
  return setup;
}

NcclSetup choose_nccl_allreduce(const nccl::GpuSystem& system, const nccl::Forced& forced, double bytes,
                                const std::string& field) {
  NcclSetup setup;
  setup.system = system;
  setup.choice = nccl::choose_allreduce(setup.system, bytes, forced, field);
  setup.algorithm = nccl::registry_name(setup.choice.chosen.algo);
  setup.algo_label = std::string(nccl::algo_name(setup.choice.chosen.algo));
  setup.fifo = nccl::fifo_chunks(setup.choice.chosen.algo, setup.choice.chosen.proto);
  setup.lanes = lanes_of(setup.choice, forced);
  setup.chunk_bytes = chunk_of(setup.choice, setup.lanes, setup.system, bytes);
  return setup;
}

size_t nccl_chunk_elements(const NcclSetup& nccl, uint64_t logical_elems, double logical_bytes, int p) {
  const double elem_bytes = logical_elems > 0 ? logical_bytes / static_cast<double>(logical_elems) : 1.0;
  const double in_chunk = std::round(nccl.chunk_bytes / elem_bytes);
  const size_t chunk = in_chunk < 1 ? 1 : static_cast<size_t>(std::min(in_chunk, 1e18));
  const size_t lane = (logical_elems + static_cast<size_t>(nccl.lanes) - 1) / static_cast<size_t>(nccl.lanes);
  // the messages of one chunk: every tree edge both ways per lane (and once the tree's bodies); NVLS: 4 per GPU with its
  // switch, NVLSTree 2 more per GPU for its tree; CollNetDirect: 2 per GPU and node-mate, and
  // with the switch; CollNetChain: 2 per GPU and lane
  const nccl::Algo algo = nccl.choice.chosen.algo;
  const double per_chunk = algo == nccl::Algo::tree             ? 2.0 * (p - 1) * nccl.lanes
                           : algo == nccl::Algo::collnet_direct ? 2.0 * p * nccl.system.max_ppn
                           : algo == nccl::Algo::collnet_chain  ? 2.0 * p * nccl.lanes
                                                                : 6.0 * p;
  const double budget = std::min(max_pipelined_messages, static_cast<double>(max_followed_messages));
  const double bodies = algo == nccl::Algo::tree ? 1 : 0;  // the tree's: one chunk's worth
  const double most = std::max(1.0, std::floor(budget / per_chunk) - bodies);
  return std::max(chunk, static_cast<size_t>(std::ceil(static_cast<double>(lane) / most)));
}

nccl::GpuSystem describe_gpu_ranks(const std::vector<PlatformHost>& hosts, const std::vector<PlatformHost>& switches,
                                   const Network& routes, const std::string& field) {
  return describe_ranks(hosts, switches, routes, field);
}

nccl::SendRecvLaunch send_recv_launch(const Scenario& scenario) {
  if (scenario.nccl.launch) return *scenario.nccl.launch;  // nccl.launch
  const TrainingSpec& t = scenario.training;
  const bool trains = t.has_layers() || t.has_model() || t.rounds > 1 || t.compute > 0 || t.compute_flops > 0 ||
                      scenario.parallelism.given;
  return trains ? nccl::SendRecvLaunch::per_collective : nccl::SendRecvLaunch::per_step;
}

GpuP2pSetup setup_gpu_p2p(const std::string& algorithm, nccl::SendRecvLaunch launch, double bytes,
                          const std::vector<PlatformHost>& hosts, const Network& routes, int nvswitches) {
  GpuP2pSetup setup;
  setup.system = describe_ranks(hosts, {}, routes, "topology");
  setup.cost = std::make_shared<const nccl::SendRecvCost>(setup.system, launch, bytes, nvswitches);
  const nccl::SendRecvCost& cost = *setup.cost;
  using nccl::EndpointKind;
  auto hops = [](const nccl::Transport& t) {
    return fmt::format("{} on NVLink and {} across nodes, {:.4g} and {:.4g} wire bytes per byte",
                       format_time(t.hop_latency(nccl::Hw::nvlink)), format_time(t.hop_latency(nccl::Hw::net)),
                       t.wire_factor(EndpointKind::gpu, EndpointKind::gpu, true),
                       t.wire_factor(EndpointKind::gpu, EndpointKind::gpu, false));
  };
  const std::string launches =
      launch == nccl::SendRecvLaunch::per_step
          ? fmt::format("a kernel's launch per step, {} with LL, {} with Simple (NCCL's Ring baseLat; its model prices "
                        "no send/recv): a step that uses what a GPU received is a group of send/recv of its own, so "
                        "each message a GPU receives is held that long after its hop",
                        format_time(cost.ll().receive_launch()), format_time(cost.simple().receive_launch()))
          : fmt::format("one kernel's launch of {} per collective (NCCL's Ring baseLat), as NCCL runs the collective "
                        "this training iteration calls: in one kernel",
                        format_time(cost.collective_overhead()));
  setup.why = fmt::format(
      "GPUs: {} runs on NCCL's send/recv, as a GPU runs it (nccl.gpu_cost=false: the links alone): each message as "
      "NCCL's send/recv sends it, in place of the links' latencies: LL up to {} (NCCL_P2P_LL_THRESHOLD x {} channels "
      "per peer), hops of {}; Simple above, hops of {}; a GPU posts its messages across the network one after "
      "another, {} each with LL, {} with Simple (NCCL's getNetOverhead, x3 with Simple); and {}",
      algorithm == "auto" ? "every algorithm auto tries" : algorithm, format_size(cost.ll_up_to()),
      cost.ll_up_to() / 16384, hops(cost.ll()), hops(cost.simple()), format_time(cost.ll().post_overhead()),
      format_time(cost.simple().post_overhead()), launches);
  return setup;
}

NcclSetup setup_nvls_level(const std::vector<PlatformHost>& hosts, const std::vector<PlatformHost>& switches,
                           const Network& routes) {
  NcclSetup setup;
  setup.system = describe_ranks(hosts, switches, routes, "collective.intra");
  if (!setup.system.nvls)
    throw InputError(fmt::format("collective.intra: nvls reduces in each node's NVSwitch (NVLink SHARP, H100 and later), "
                                 "which {} here has not{}; allowed: ring, halving-doubling",
                                 setup.system.gpu->name,
                                 setup.system.gpu->nvlink_sharp ? " (the platform names no nvswitch host per node)" : ""));
  setup.choice.chosen.algo = nccl::Algo::nvls;
  add_switches(setup, hosts, switches);
  return setup;
}

std::string describe_nccl(const NcclSetup& setup) {
  const nccl::Transport& t = *setup.transport;
  // NVLS's messages on NVLink go to and from the switch, at NVLS's efficiency too; CollNet's
  // across nodes go to and from the rails' SHARP switches
  const bool nvswitch = !setup.switches.empty() && setup.switch_kind == SwitchKind::nvlink;
  const bool sharp = !setup.switches.empty() && setup.switch_kind == SwitchKind::network;
  using nccl::EndpointKind;
  const bool p2p = setup.algo_label == "P2P";
  return fmt::format("NCCL's transport for {}/{}: {} base latency per collective, hops of {} on NVLink and {} across "
                     "nodes ({}, in place of the links' latencies), {:.4g} wire bytes per byte on NVLink{}, "
                     "{:.4g} across nodes{}{}",
                     setup.algo_label, nccl::proto_name(setup.choice.chosen.proto),
                     format_time(t.collective_overhead()), format_time(t.hop_latency(nccl::Hw::nvlink)),
                     format_time(t.hop_latency(nccl::Hw::net)),
                     p2p ? "a Ring hop's hwLat and baseLat: NCCL's model prices no send/recv" : "NCCL's hwLat",
                     t.wire_factor(EndpointKind::gpu, nvswitch ? EndpointKind::nvswitch : EndpointKind::gpu, true),
                     nvswitch ? " (to and from the NVSwitch)" : "",
                     t.wire_factor(EndpointKind::gpu, sharp ? EndpointKind::sharp_switch : EndpointKind::gpu, false),
                     sharp ? " (to and from the rails' SHARP switches)" : "",
                     p2p && t.post_overhead() > 0
                         ? fmt::format("; a GPU posts its messages across nodes one after another, {} each (NCCL's "
                                       "getNetOverhead{})", format_time(t.post_overhead()),
                                       setup.choice.chosen.proto == nccl::Proto::simple ? ", x3 with Simple" : "")
                         : "");
}

}  // namespace collsim
