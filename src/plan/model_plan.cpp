// The cost model's input for the run: the platform's routes (each read once), the
// lower bound's view of the ranks' links, the locality groups and their costs, the
// algorithm auto chooses, and alpha and B as people read them (the worst route between
// the chosen algorithm's partners).
#include "plan/model_plan.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <simgrid/s4u/Host.hpp>

#include "algorithms/algorithms.hpp"
#include "algorithms/hierarchy.hpp"
#include "algorithms/message_counts.hpp"
#include "algorithms/partners.hpp"
#include "model/contention.hpp"
#include "model/route_cache.hpp"
#include "plan/auto_choice.hpp"
#include "scenario/settings_read.hpp"
#include "plan/nccl_run.hpp"
#include "plan/server_plan.hpp"
#include "util/units.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

// The model's alpha and B for an algorithm: the worst route between ranks that talk to
// each other (algorithms/partners.hpp), either way.
void read_partner_routes(const RankPairs& pairs, ModelInput& model) {
  const Network& routes = *model.network;
  model.alpha = 0;
  model.bandwidth = std::numeric_limits<double>::infinity();
  std::vector<int> links;  // each route read once, not kept (p log p pairs at p = 131,072)
  for (auto [a, b] : pairs) {
    if (a == b) continue;
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      links.clear();
      model.alpha = std::max(model.alpha, routes.append_route(from, to, links));
      for (int link : links) model.bandwidth = std::min(model.bandwidth, routes.link(link).bandwidth);
    }
  }
}

// The lower bound's view of the platform (the ranks' own links, the shortest route).
void read_injection(int root, ModelInput& model) {
  const Network& routes = *model.network;
  const int p = model.p;
  if (p == 1) return;
  // The lower bound's inputs: each rank's own links (the first link of its route to its
  // ring neighbour, the last link of the route into it) and the shortest latency.
  std::vector<double> out(static_cast<size_t>(p), 0), in(static_cast<size_t>(p), 0);
  model.min_alpha = std::numeric_limits<double>::infinity();
  std::vector<int> links;  // each route read once, not kept (Network::append_route)
  for (int r = 0; r < p; ++r) {
    const int next = (r + 1) % p;
    links.clear();
    model.min_alpha = std::min(model.min_alpha, routes.append_route(r, next, links));
    // (a route without links limits nothing)
    const double unlimited = std::numeric_limits<double>::infinity();
    out[static_cast<size_t>(r)] = links.empty() ? unlimited : routes.link(links.front()).bandwidth;
    in[static_cast<size_t>(next)] = links.empty() ? unlimited : routes.link(links.back()).bandwidth;
  }
  // Up to 128 ranks, every pair (a latency-optimal tree may avoid the slow pairs); above,
  // the ring neighbours' and the root's routes only (p^2 lookups would cost seconds).
  auto shortest = [&](int a, int b) {
    links.clear();
    if (a != b) model.min_alpha = std::min(model.min_alpha, routes.append_route(a, b, links));
  };
  if (p <= 128) {
    for (int a = 0; a < p; ++a)
      for (int b = 0; b < p; ++b) shortest(a, b);
  } else {
    for (int r = 0; r < p; ++r) shortest(root, r);
  }
  double out_sum = 0, in_sum = 0;
  for (int r = 0; r < p; ++r) {
    out_sum += out[static_cast<size_t>(r)];
    in_sum += in[static_cast<size_t>(r)];
  }
  // infinite when no rank has a link of its own: left unset (0), the bound then uses B
  const double mean = std::min(out_sum, in_sum) / p;
  model.injection_bandwidth = std::isfinite(mean) ? mean : 0;
}



// The model's input from the scenario and payload; it prices each algorithm's schedule on
// the platform's own routes, each read once.
void start_model_input(const Scenario& scenario, const Payload& payload, const ModelPlatform& platform,
                       ModelInput& model) {
  model.p = static_cast<int>(platform.places.ranks());
  // The model prices what the algorithms send: every logical element, whatever is carried.
  model.elems = payload.logical_elems;
  model.overhead = scenario.message_overhead;
  model.bytes_per_elem = static_cast<double>(dtype_size(scenario.collective.dtype));
  model.segment_elems = segment_elements(scenario.collective.segment, scenario.collective.dtype);
  model.network = platform.network;
  model.root = scenario.collective.root;
  model.channels = scenario.collective.channels;
  model.intra_level = scenario.collective.intra;
  model.inter_level = scenario.collective.inter;
  if (scenario.collective.reduce_bandwidth) model.reduce_bandwidth = *scenario.collective.reduce_bandwidth;
}

// NCCL's choice (the tuner's for "nccl", the protocol and channels of a named nccl-*
// algorithm) and its transport, which every message of the run and of the model pays; the
// switches it reduces in, as endpoints after the ranks'.
void use_nccl(const ModelPlatform& platform, RunPlan& plan) {
  const Scenario& scenario = plan.scenario;
  ModelInput& model = plan.model;
  const NcclSetup nccl = setup_nccl(scenario, scenario.collective.algorithm, platform.rank_hosts, platform.switch_hosts,
                                    *platform.network, scenario.collective.size);
  plan.choice.algorithm = &find_algorithm(scenario.collective.kind, nccl.algorithm, "collective.algorithm");
  if (scenario.collective.algorithm == "nccl") plan.choice.by = "nccl";
  plan.choice.reason = nccl.choice.why;
  plan.choice.parameters["nccl"] = {{"algo", nccl.algo_label},
                                    {"proto", nccl::proto_name(nccl.choice.chosen.proto)},
                                    {"channels", nccl.choice.channels}};
  model.channels = nccl.lanes;
  model.fifo = nccl.fifo;
  model.hop_inside = nccl.transport->hop_latency(nccl::Hw::nvlink);
  model.hop_across = nccl.transport->hop_latency(nccl::Hw::net);
  model.segment_elems = nccl_chunk_elements(nccl, plan.payload.logical_elems, plan.payload.logical_bytes, model.p);
  model.message_cost = nccl.transport;
  if (!nccl.switches.empty()) {
    std::vector<int> chosen;
    for (const PlatformHost& host : nccl.switches) chosen.push_back(host.index);
    model.network = platform.with_switches(chosen);
    // the trace names them: endpoint workers + s is switch s (its messages are in the log)
    nlohmann::json names = nlohmann::json::array();
    for (const PlatformHost& host : nccl.switches) names.push_back(host.name);
    plan.choice.parameters["nccl"]["switches"] = std::move(names);
    // NVLS: two actors per switch, its reductions then its multicasts (nvls_rounds.hpp)
    for (int role = 0; role < nccl.actors_per_switch; ++role)
      for (size_t s = 0; s < nccl.switches.size(); ++s) {
        const int endpoint = static_cast<int>(platform.places.ranks() + s);
        model.switch_endpoints.push_back(endpoint);
        plan.switches.push_back({nccl.switches[s].name, nccl.switch_kind, nccl.switch_members[s], endpoint});
      }
  }
  plan.notes.push_back(nccl.choice.why);
  plan.notes.push_back(describe_nccl(nccl));
}

// collsim's own algorithms on GPUs: every message pays NCCL's send/recv (plan/nccl_run.hpp),
// those to and from `nvswitches` NVSwitch actors after the ranks too.
void use_gpu_p2p(const ModelPlatform& platform, RunPlan& plan, int nvswitches) {
  const Scenario& s = plan.scenario;
  const GpuP2pSetup gpu = setup_gpu_p2p(s.collective.algorithm, send_recv_launch(s), s.collective.size,
                                        platform.rank_hosts, *platform.network, nvswitches);
  plan.model.message_cost = gpu.cost;
  plan.notes.push_back(gpu.why);
}

// hierarchical's NVLS level (collective.intra nvls): each node's NVSwitch in the model's
// network and as two switch actors (its reductions, its multicasts: hierarchy_nvls.cpp), the
// locality groups being the nodes, in the switches' order.
void use_nvls_level(const NcclSetup& nvls, const ModelPlatform& platform, const RankLocality& locality, RunPlan& plan) {
  const Scenario& scenario = plan.scenario;
  if (scenario.recovery.policy != RecoveryPolicy::none || !scenario.faults.empty())
    throw InputError("collective.intra: nvls reduces in the NVSwitches' actors, which serve the first group only: not "
                     "with faults or recovery; use ring or halving-doubling");
  if (locality_groups(locality.ids) != nvls.switch_members)
    throw InputError(fmt::format("collective.intra: nvls needs the groups to be the nodes (each NVSwitch's GPUs); the "
                                 "groups here come from {}: leave out collective.group_size",
                                 locality.source));
  std::vector<int> chosen;
  for (const PlatformHost& host : nvls.switches) chosen.push_back(host.index);
  plan.model.network = platform.with_switches(chosen);
  // with the ring between the nodes the level runs through NCCL's FIFO (hierarchy.hpp): NVLS's
  // NCCL_STEPS chunks per connection (nccl/constants.hpp, fifo_chunks)
  plan.model.fifo = nccl::fifo_chunks(nccl::Algo::nvls, nccl::Proto::simple);
  // and its chunk is NCCL's NVLS step unless collective.segment sets it: 128 KiB per channel
  // (nccl/constants.cpp, chunk_bytes) on NVLS's 16 channels (NCCL_NVLS_NCHANNELS, src/transport/nvls.cc
  // 2.18.1, as nccl/tuner.cpp), 2 MiB of the vector per step
  constexpr int nvls_channels = 16;
  if (scenario.collective.segment == CollectiveSpec{}.segment)
    plan.model.segment_elems = segment_elements(nccl::chunk_bytes(nccl::Algo::nvls, nccl::Proto::simple) * nvls_channels,
                                                scenario.collective.dtype);
  for (int role = 0; role < nvls.actors_per_switch; ++role)
    for (size_t s = 0; s < nvls.switches.size(); ++s) {
      const int endpoint = static_cast<int>(platform.places.ranks() + s);
      plan.model.switch_endpoints.push_back(endpoint);
      plan.switches.push_back({nvls.switches[s].name, SwitchKind::nvlink, nvls.switch_members[s], endpoint});
    }
  plan.notes.push_back(fmt::format("collective.intra nvls: each node's NVSwitch ({} of them) reduces its GPUs' vectors "
                                   "and multicasts the result (NVLink SHARP); each GPU sends and receives (1 + 1/g) "
                                   "times the vector through its NVLink port",
                                   nvls.switches.size()));
}

}  // namespace

// Elements per pipeline segment (at least one).
size_t segment_elements(double segment_bytes, Dtype dtype) {
  const double elements = std::round(segment_bytes / static_cast<double>(dtype_size(dtype)));
  return elements < 1 ? 1 : static_cast<size_t>(std::min(elements, 1e18));
}

// The model's input for this run (routes, groups, alpha and B of the chosen algorithm's
// partners) and, for --algorithm auto, the choice; returns the ranks' locality groups.
RankLocality plan_model(const std::vector<AutoCandidate>& simulated, const ModelPlatform& platform, RunPlan& plan) {
  const Scenario& scenario = plan.scenario;
  const bool automatic = scenario.collective.algorithm == "auto";
  ModelInput& model = plan.model;
  const int p = static_cast<int>(platform.places.ranks());
  const std::vector<sg4::Host*>& hosts = platform.hosts;
  start_model_input(scenario, plan.payload, platform, model);
  const int root = scenario.collective.root, servers = scenario.collective.servers.value_or(1);
  auto model_for = [&](const AlgorithmInfo&) { return model; };
  read_injection(scenario.collective.root, model);
  check_servers(scenario.collective, p);
  model.servers = scenario.collective.servers.value_or(1);
  // The hierarchical allreduce's groups and their costs, for its run and for auto's ranking.
  const RankLocality locality = rank_locality(scenario, platform.places);
  if (runs_nccl(scenario)) use_nccl(platform, plan);
  std::optional<NcclSetup> nvls;  // hierarchical's NVLS level: the nodes' NVSwitches
  if (scenario.collective.intra == HierarchyLevel::nvls && (automatic || plan.choice.algorithm->run == allreduce_hierarchical)) {
    if (automatic)
      throw InputError("collective.intra: nvls needs collective.algorithm hierarchical (auto does not start switches)");
    if (p > 1) nvls = setup_nvls_level(platform.rank_hosts, platform.switch_hosts, *platform.network);
  }
  if (platform.gpu_transport && p > 1)
    use_gpu_p2p(platform, plan, nvls ? nvls->actors_per_switch * static_cast<int>(nvls->switches.size()) : 0);
  if (!automatic && plan.choice.algorithm->uses.servers) plan_servers(hosts, locality, plan);
  if (scenario.collective.kind == Collective::allreduce &&
      (automatic || plan.choice.algorithm->run == allreduce_hierarchical)) {
    read_hierarchy(locality.ids, model);
    model.locality = locality.ids;
    check_levels(model);
    if (nvls) use_nvls_level(*nvls, platform, locality, plan);
  }
  // the channels' rings (and NCCL's) turn inside the groups; auto tries channels there too
  if (automatic || model.channels > 1 || (plan.choice.algorithm != nullptr && plan.choice.algorithm->uses.nccl))
    model.locality = locality.ids;
  if (automatic) {
    plan.choice.algorithm = &choose_algorithm(scenario.collective.kind, simulated, model_for, plan);
    for (const UnreadSetting& unread : settings_not_read(scenario.collective, *plan.choice.algorithm))
      plan.notes.push_back(fmt::format("collective.{}: auto chose {}, which does not read it (read by: {}): it changes "
                                       "nothing in this run",
                                       unread.key, plan.choice.algorithm->name, unread.read_by));
  }
  if (scenario.network == NetworkModel::realistic) plan.notes.push_back("model time: " + realistic_network_caveat());
  // An algorithm whose every pair of ranks talks (direct, alltoall) describes p(p-1) messages:
  // beyond the model's limit (model/contention.hpp) it is refused here, in one line, before its
  // p(p-1)/2 pairs are listed (at p = 131,072: 8.6 x 10^9 pairs, 69 GB, and as many routes).
  const double every_pair = 0.5 * p * (p - 1.0);
  if (plan.model_only && plan.choice.algorithm->partners == all_partners && every_pair > max_model_messages)
    throw InputError(fmt::format("--algorithm: {} on {} ranks: its schedule describes more than {} messages (the "
                                 "model's limit, README \"Limits\")",
                                 plan.choice.algorithm->name, p, max_model_messages));
  // alpha and B as people read them: the worst route between the chosen algorithm's partners
  read_partner_routes(model.deployment.processes ? server_process_partners(model)
                                                 : plan.choice.algorithm->partners(p, root, servers),
                      model);
  if (plan.choice.algorithm->uses.groups) plan.notes.push_back(describe_hierarchy(locality, model));
  if (model.channels > 1 && plan.choice.algorithm->collective != Collective::alltoall)
    plan.notes.push_back(fmt::format("{} channels: {} slices of about {}, each on its own rings, all at once; channel "
                                     "c's rings turn by c members inside each group ({})",
                                       model.channels, model.channels,
                                       format_size(model.bytes(model.elems) / model.channels), locality.source));
  if (plan.choice.algorithm->uses.segment) {
    const double effective = model.bytes(model.segment_elems);
    if (effective != scenario.collective.segment)
      plan.notes.push_back(fmt::format("segments of {} bytes (the requested {} bytes rounded to whole elements)",
                                         effective, scenario.collective.segment));
  }
  return locality;
}

// collective.intra and inter halve and double among a power of two: of the members of every
// group (intra), of the groups (inter).
void check_levels(const ModelInput& model, const char* intra, const char* inter) {
  const auto groups = model_groups(model);
  auto power_of_two = [](size_t n) { return n > 0 && (n & (n - 1)) == 0; };
  if (model.intra_level == HierarchyLevel::halving_doubling)
    for (const auto& group : groups)
      if (!power_of_two(group.size()))
        throw InputError(fmt::format("{}: halving-doubling needs a power of two of ranks in every group; "
                                     "a group has {}; use ring", intra, group.size()));
  if (model.inter_level == HierarchyLevel::halving_doubling && !power_of_two(groups.size()))
    throw InputError(fmt::format("{}: halving-doubling needs a power of two of groups; there are {}; "
                                 "use ring or tree", inter, groups.size()));
}

}  // namespace collsim
