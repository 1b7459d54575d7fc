#include "plan/planner.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <stdexcept>

#include "algorithms/message_counts.hpp"
#include "comm/buffer.hpp"
#include "model/cost_model.hpp"
#include "model/generated_network.hpp"
#include "model/route_cache.hpp"
#include "plan/auto_choice.hpp"
#include "plan/engine_setup.hpp"
#include "plan/fault_plan.hpp"
#include "plan/locality.hpp"
#include "plan/model_plan.hpp"
#include "plan/nccl_run.hpp"
#include "plan/server_plan.hpp"
#include "platform/generator_spec.hpp"
#include "platform/platform.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

// Whole vectors a rank of the scenario's algorithm holds at once (plan_payload shares the
// carried budget among them); auto and sharded training plan for one.
double vectors_held(const Scenario& scenario, int p) {
  const CollectiveSpec& collective = scenario.collective;
  if (chosen_at_run_time(collective.algorithm) || scenario.training.sharding != Sharding::none) return 1;
  return vectors_held_per_rank(find_algorithm(collective.kind, collective.algorithm, "collective.algorithm"), p);
}

// Layered training: its gradient buckets, in backward order (none without layers).
std::vector<Bucket> training_buckets(const Scenario& scenario) {
  const TrainingSpec& training = scenario.training;
  if (!training.has_layers()) return {};
  const double bytes_per_parameter = static_cast<double>(dtype_size(scenario.collective.dtype));
  return training.fusion ? plan_fusion(training.layers, bytes_per_parameter, training.fusion->buffer,
                                       training.fusion->cycle)
                         : plan_buckets(training.layers, bytes_per_parameter, training.bucket);
}

// The run's carried elements: of the whole vector, or of each bucket's layers.
Payload payload_for(const Scenario& scenario, int p) {
  const CollectiveSpec& collective = scenario.collective;
  std::vector<std::vector<uint64_t>> parts;
  for (const Bucket& bucket : training_buckets(scenario))
    parts.push_back(layer_parameters(scenario.training.layers, bucket));
  return plan_payload(collective.size, collective.dtype, p, collective.carried_elements, collective.channels,
                      vectors_held(scenario, p), parts);
}

// Layered training: the buckets' places in the carried elements (none without layers).
std::vector<BucketSlice> plan_bucket_slices(const Scenario& scenario, const Payload& payload) {
  const std::vector<Bucket> buckets = training_buckets(scenario);
  std::vector<CarriedMap> maps;
  for (size_t b = 0; b < buckets.size(); ++b) maps.push_back(payload.part_map(b));
  return slice_buckets(buckets, maps);
}

// What the run would need, refused beyond the stated limits before anything is built.
RunSize check_limits(const Scenario& scenario, bool model_only) {
  const long long host_count =
      check_platform_size(scenario.topology, scenario.source_dir, model_only ? max_model_hosts : max_run_hosts);
  if (model_only) return {.hosts = host_count};
  const int ranks = scenario.workers.value_or(static_cast<int>(host_count));
  RunSize size = check_run_size(scenario, ranks, payload_for(scenario, ranks),
                                segment_elements(scenario.collective.segment, scenario.collective.dtype),
                                training_buckets(scenario));
  size.hosts = host_count;
  return size;
}

// Ranks map to hosts in platform order, or as the scenario's placement says.
std::vector<sg4::Host*> place_ranks(const Scenario& scenario, const PlatformInfo& platform, int workers,
                                    const sg4::Engine& engine) {
  if (workers > static_cast<int>(platform.hosts.size()))
    throw InputError(fmt::format("workers: {} workers but '{}' has only {} hosts", workers, platform.source,
                                 platform.hosts.size()));
  if (scenario.placement.empty())
    return std::vector<sg4::Host*>(platform.hosts.begin(), platform.hosts.begin() + workers);
  if (static_cast<int>(scenario.placement.size()) != workers)
    throw InputError(fmt::format("placement: {} host(s) listed for {} workers", scenario.placement.size(), workers));
  std::vector<sg4::Host*> hosts;
  for (size_t i = 0; i < scenario.placement.size(); ++i) {
    sg4::Host* host = engine.host_by_name_or_null(scenario.placement[i]);
    if (host == nullptr)
      throw InputError(fmt::format("placement.{}: no host '{}' in '{}'", i, scenario.placement[i], platform.source));
    if (std::find(hosts.begin(), hosts.end(), host) != hosts.end())
      throw InputError(fmt::format("placement.{}: host '{}' is listed twice", i, scenario.placement[i]));
    hosts.push_back(host);
  }
  return hosts;
}

// The platform built in the engine and the ranks placed on it: the ranks' hosts. NCCL's
// algorithms run with PXN routes and NCCL's hop latencies (platform.hpp, PlatformOptions);
// `switches` are the switches that reduce in the network.
std::vector<sg4::Host*> plan_platform(sg4::Engine& engine, SimGridGuard& guard, RunPlan& plan,
                                      std::vector<sg4::Host*>& all_hosts, std::vector<sg4::Host*>& switches) {
  const Scenario& scenario = plan.scenario;
  guard.set_context(fmt::format("topology: SimGrid stopped on '{}'", scenario.topology));
  const bool nccl = runs_nccl(scenario);
  const PlatformInfo platform = build_platform(engine, scenario.topology, scenario.source_dir,
                                               {.pxn = nccl && scenario.nccl.pxn, .latency_in_transport = nccl,
                                                .latency_in_transport_on_gpus = wants_gpu_transport(scenario)});
  plan.platform.gpu_transport = platform.gpus && wants_gpu_transport(scenario);
  // simgrid_options chose the Lazy update from the scenario alone: exact only if it holds
  if (transfers_without_latency(scenario))
    for (const sg4::Link* link : engine.get_all_links())
      if (link->get_latency() != 0)
        throw std::logic_error(fmt::format("link {} keeps a latency on a platform planned without", link->get_name()));
  if (nccl || runs_nvls_level(scenario)) switches = platform.switches;
  const int p = scenario.workers.value_or(static_cast<int>(platform.hosts.size()));
  if (scenario.collective.root >= p)
    throw InputError(fmt::format("collective.root: {} is not a rank; allowed: 0 to {}", scenario.collective.root, p - 1));
  const std::vector<sg4::Host*> hosts = place_ranks(scenario, platform, p, engine);
  plan.workers = p;
  plan.platform.source = platform.source;
  plan.platform.kind = platform.kind;
  plan.platform.link_count = platform.link_count;
  for (const sg4::Host* host : platform.hosts) plan.platform.hosts.emplace_back(host->get_name());
  for (const sg4::Host* host : hosts) plan.rank_hosts.emplace_back(host->get_name());
  all_hosts = platform.hosts;
  return hosts;
}

// A user's carried count that leaves chunks or layers without an element: they are
// simulated all the same (their bytes, their time), but no data of theirs is checked.
void note_thin_carry(uint64_t asked, uint64_t chunks, RunPlan& plan) {
  const Payload& payload = plan.payload;
  size_t thin_parts = 0, empty_layers = 0, layers = 0;
  for (size_t i = 0; i < payload.part_logical.size(); ++i) {
    if (payload.part_carried[i] < carried_to_represent(payload.part_logical[i], chunks)) ++thin_parts;
    if (payload.piece_logical[i].size() < 2) continue;
    layers += payload.piece_logical[i].size();
    empty_layers += static_cast<size_t>(std::count(payload.piece_carried[i].begin(), payload.piece_carried[i].end(), 0));
  }
  const std::string unverified = "their messages are simulated in full, their data is not verified (the default "
                                 "carry gives every one an element)";
  if (thin_parts > 0)
    plan.notes.push_back(fmt::format(
        "carried_elements {}: {} some of the {} chunks (p x channels) without an element: {}", asked,
        payload.part_logical.size() == 1 ? std::string("leaves")
                                         : fmt::format("{} of the {} buckets leave", thin_parts, payload.part_logical.size()),
        chunks, unverified));
  if (empty_layers > 0)
    plan.notes.push_back(fmt::format("carried_elements {}: {} of the {} layers carry no element: {}", asked,
                                     empty_layers, layers, unverified));
}

// The notes a user should read about the carried elements (logical vs carried size).
void note_payload(RunPlan& plan) {
  const Payload& payload = plan.payload;
  if (payload.downscaled()) {
    std::string note = fmt::format("memory holds {} of the {} elements per rank; each stands for {:g} bytes",
                                   payload.carried_elems, payload.logical_elems, payload.bytes_per_elem);
    // A fraction such as 48.0001 reads like a bug unless it says where it comes from.
    if (payload.bytes_per_elem != std::floor(payload.bytes_per_elem))
      note += fmt::format(" on average ({:g} bytes / {} elements; each message sends the bytes of the logical "
                          "elements it stands for)",
                          payload.logical_bytes, payload.carried_elems);
    plan.notes.push_back(note);
  }
  const auto& carried = plan.scenario.collective.carried_elements;
  if (!carried) return;
  if (*carried > payload.logical_elems)
    plan.notes.push_back(fmt::format("carried_elements {} is more than the {} elements of the message: carrying {}",
                                     *carried, payload.logical_elems, payload.carried_elems));
  note_thin_carry(*carried, static_cast<uint64_t>(plan.workers) * static_cast<uint64_t>(plan.scenario.collective.channels),
                  plan);
}

// The settings of the scenario the chosen algorithm reads, as it will run them.
nlohmann::json algorithm_parameters(const RunPlan& plan) {
  const Uses& uses = plan.choice.algorithm->uses;
  const ModelInput& model = plan.model;
  nlohmann::json parameters = plan.choice.parameters;  // a tuner's own (NCCL's algo, proto, channels)
  if (uses.root) parameters["root"] = model.root;
  if (uses.segment) parameters["segment_bytes"] = model.bytes(model.segment_elems);
  if (uses.servers) parameters["servers"] = model.servers;
  if (uses.servers && plan.scenario.collective.parameter_server.given) parameters["parameter_server"] = server_parameters(plan);
  if (uses.channels) parameters["channels"] = model.channels;
  if (uses.groups) parameters["groups"] = {{"count", model_groups(model).size()}, {"from", plan.locality.source}};
  if (uses.levels)
    parameters["levels"] = {{"intra", hierarchy_level_names().name(model.intra_level)},
                            {"inter", hierarchy_level_names().name(model.inter_level)}};
  return parameters;
}

// collective.parameter_server.variables: each bucket's variables on the servers, placed
// once for the whole model (training/variable_placement.hpp).
void place_server_variables(RunPlan& plan) {
  const VariablePlacement how = plan.scenario.collective.parameter_server.variables;
  if (how == VariablePlacement::split || plan.choice.algorithm == nullptr || !plan.choice.algorithm->uses.servers) return;
  const std::vector<Layer>& layers = plan.scenario.training.layers;
  const std::vector<int> server_of = place_variables(layers, how, plan.model.servers);
  for (const BucketSlice& slice : plan.training.buckets)
    plan.training.server_pieces.push_back(std::make_shared<const ServerPieces>(bucket_pieces(layers, slice.bucket, server_of)));
}

// What each iteration of training does besides one collective: its buckets and batch.
void plan_training(RunPlan& plan) {
  const Scenario& scenario = plan.scenario;
  const TrainingSpec& training = scenario.training;
  TrainingPlan& out = plan.training;
  out.buckets = plan_bucket_slices(scenario, plan.payload);
  out.batch = training.batch;
  out.launch_per_collective = training.launch_per_collective;
  out.launch_per_tensor = training.launch_per_tensor;
  if (!training.has_layers()) return;
  if (plan.workers > max_activity_ranks)
    plan.notes.push_back(fmt::format("the trace's activities (compute and comm lanes) list ranks 0 to {} of {}",
                                     max_activity_ranks - 1, plan.workers));
  const double bytes_per_parameter = static_cast<double>(dtype_size(scenario.collective.dtype));
  out.memory_per_worker =
      memory_per_worker(total_parameters(training.layers), bytes_per_parameter, training.sharding, plan.workers);
  out.sharding = training.sharding;
  out.buckets_in_flight = carries_buckets_in_flight(scenario);
  place_server_variables(plan);
  if (training.sharding == Sharding::none) return;
  const auto halves = allreduce_halves(scenario.collective.algorithm);
  out.reduce_scatter = &find_algorithm(Collective::reduce_scatter, halves->first, "collective.algorithm");
  out.allgather = &find_algorithm(Collective::allgather, halves->second, "collective.algorithm");
  if (training.sharding != Sharding::zero3) return;
  std::vector<Bucket> buckets;
  for (const BucketSlice& slice : out.buckets) buckets.push_back(slice.bucket);
  out.zero3 = plan_zero3(training.layers, buckets, training.overlap == Overlap::forward);
}

// A fixed timeout shorter than one chunk's transfer makes healthy waits suspicious.
void warn_about_short_timeout(RunPlan& plan) {
  const RecoverySpec& recovery = plan.scenario.recovery;
  if (recovery.policy != RecoveryPolicy::rebuild || recovery.timeout_is_factor) return;
  const ModelInput& m = plan.model;
  const double chunk = m.message_time((m.elems + static_cast<size_t>(m.p) - 1) / static_cast<size_t>(m.p));
  if (recovery.timeout < chunk) {
    plan.warnings.push_back(
        fmt::format("recovery.timeout {} is shorter than one chunk's transfer ({}): healthy waits will look late",
                    recovery.timeout_text, format_time(chunk)));
  }
}

// Every rank an image of every other under the platform's symmetry: a generated family whose
// hosts are all alike (not a rack, whose slow host is not), every host a rank, in platform order.
bool ranks_alike(const Scenario& scenario, const RunPlan& plan, size_t hosts) {
  const auto generator = parse_generator(scenario.topology, "topology");
  return generator && !std::holds_alternative<RackSpec>(*generator) && scenario.placement.empty() &&
         static_cast<size_t>(plan.workers) == hosts;
}

}  // namespace

namespace {

// SimGrid refuses some platforms only when a route is asked of them (a zone route that
// leaves its gateways out: "Bad gateways for route from ..."), by throwing: the platform's
// fault, said in one line that names it (exit 2), not a failed run.
// Only a platform file's: a generated platform failing is collsim's bug (its own zones).
template <typename Step>
void on_the_platform(const Scenario& scenario, Step&& step) {
  try {
    step();
  } catch (const InputError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& error) {
    if (scenario.topology.empty() || parse_generator(scenario.topology, "topology")) throw;
    std::string message = error.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    if (message.size() > 300) message = message.substr(0, 300) + "...";
    throw InputError(fmt::format("topology: SimGrid cannot route on '{}': {}", scenario.topology, message));
  }
}

}  // namespace

namespace {

// The scenario as it runs: auto's pick of one of NCCL's variants runs that variant.
Scenario as_picked(const Scenario& scenario, const std::optional<AutoNcclPick>& pick) {
  Scenario picked = scenario;
  if (!pick || !pick->chosen || scenario.collective.algorithm != "auto") return picked;
  picked.collective.algorithm = pick->algorithm;
  picked.nccl.proto = pick->proto;
  return picked;
}

// What auto weighed: NCCL's variants against collsim's best, first among the notes; the
// candidates list both, whichever won.
void note_auto_nccl(const Scenario& asked, const std::optional<AutoNcclPick>& pick, RunPlan& plan) {
  if (!pick || asked.collective.algorithm != "auto") return;
  plan.notes.insert(plan.notes.begin(), pick->reason);
  std::vector<AutoCandidate>& candidates = plan.choice.candidates;
  if (pick->chosen) {
    plan.choice.asked = "auto";
    plan.choice.by = pick->by;
    plan.choice.reason = pick->reason;
    candidates.clear();
    if (pick->own) candidates.push_back(*pick->own);
  }
  candidates.insert(candidates.end(), pick->variants.begin(), pick->variants.end());
  order_candidates(candidates);
}

// The algorithm named by the scenario, the payload and its notes: what every plan needs
// before the model.
void plan_choice_and_payload(RunPlan& plan) {
  const Scenario& scenario = plan.scenario;
  plan.choice.asked = scenario.collective.algorithm;
  if (!chosen_at_run_time(scenario.collective.algorithm)) {
    plan.choice.algorithm = &find_algorithm(scenario.collective.kind, scenario.collective.algorithm, "collective.algorithm");
    plan.choice.reason = "named by collective.algorithm";
  }
  plan.payload = payload_for(scenario, plan.workers);
  note_payload(plan);
}

// collective.parameter_server.per_node: check_limits counted one node's servers before the
// platform was built (its nodes multiply them); once placed, the run's messages are counted
// again with every server the run starts.
void recount_placed_servers(RunPlan& plan) {
  const Scenario& scenario = plan.scenario;
  if (plan.model_only || !scenario.collective.parameter_server.per_node || plan.choice.algorithm == nullptr ||
      !plan.choice.algorithm->uses.servers)
    return;
  Scenario placed = scenario;
  placed.collective.parameter_server.per_node.reset();
  placed.collective.servers = plan.model.servers;
  const long long hosts = plan.limits.hosts;
  plan.limits = check_run_size(placed, plan.workers, plan.payload,
                               segment_elements(scenario.collective.segment, scenario.collective.dtype),
                               training_buckets(placed));
  plan.limits.hosts = hosts;
}

// `asked`: the scenario before auto's pick of one of NCCL's variants (as_picked).
void plan_the_rest(const Scenario& asked, const PlanOptions& options, RunPlan& plan) {
  note_auto_nccl(asked, options.auto_nccl, plan);
  plan_training(plan);
  warn_about_short_timeout(plan);
  plan.kept_messages = options.kept_messages;
  plan.input = options.input ? options.input : [op = plan.scenario.collective.op, seed = plan.scenario.seed](int rank, Buffer& buf) {
    fill_input(buf, rank, op, seed);
  };
  plan.input_at = [op = plan.scenario.collective.op, seed = plan.scenario.seed](int rank, Buffer& buf, size_t first) {
    fill_input(buf, rank, op, seed, first);
  };
  if (options.input) {
    // A test's own inputs come whole: the part is cut from the whole vector.
    plan.input_at = [input = options.input, payload = plan.payload](int rank, Buffer& buf, size_t first) {
      Buffer whole(buf.dtype(), payload.carried_elems, payload.logical_elems);
      input(rank, whole);
      buf = whole.slice(first, buf.map());
    };
  }
}

// Why the model's routes cannot come from the generator's structure (empty: they can).
std::string needs_simgrid_platform(const Scenario& scenario, const PlanOptions& options, long long hosts,
                                   std::optional<GeneratedPlatform>& generated) {
  if (!options.routes_from_structure) return "asked for";
  const auto generator = parse_generator(scenario.topology, "topology");
  if (!generator) return "a platform file has no generator's structure";
  if (!scenario.placement.empty()) return "a placement";
  const bool nccl = runs_nccl(scenario);
  if (scenario.collective.algorithm != "auto" && !nccl &&
      find_algorithm(scenario.collective.kind, scenario.collective.algorithm, "collective.algorithm").uses.servers)
    return "the parameter server's deployment";
  const long long workers = scenario.workers.value_or(hosts);
  if (workers > hosts) return "more workers than hosts";
  if (options.generated) {
    generated = *options.generated;  // made for this scenario already, its routes shared
    return "";
  }
  std::string why_not;
  // built as plan_platform builds it for NCCL's algorithms: PXN, the latencies in the transport
  generated = generated_platform(*generator, static_cast<int>(workers), why_not,
                                 {.pxn = nccl && scenario.nccl.pxn,
                                  .zero_latency = nccl || (gpus_only(*generator) && wants_gpu_transport(scenario))});
  return generated ? "" : why_not;
}

// What NCCL's algorithms read of the generator's structure: the ranks' hosts, the reducing
// switches, and the ranks' routes with some of them.
void describe_structure_for_nccl(const GeneratedPlatform& generated, ModelPlatform& platform) {
  const GeneratedStructure& structure = *generated.structure;
  for (size_t r = 0; r < generated.places.ranks(); ++r) {
    const int host = static_cast<int>(r);
    platform.rank_hosts.push_back({structure.name(host), structure.properties(host), host});
  }
  const int first_switch = static_cast<int>(structure.hosts());
  for (size_t s = 0; s < structure.switches(); ++s) {
    const int host = first_switch + static_cast<int>(s);
    platform.switch_hosts.push_back({structure.name(host), structure.properties(host), static_cast<int>(s)});
  }
  platform.with_switches = [structure = generated.structure, zero = generated.zero_latency,
                            ranks = static_cast<int>(generated.places.ranks()), first_switch](const std::vector<int>& switches) {
    std::vector<int> hosts;
    for (int s : switches) hosts.push_back(first_switch + s);
    return std::shared_ptr<const Network>(std::make_shared<const GeneratedNetwork>(structure, zero, ranks, std::move(hosts)));
  };
}

// A host of SimGrid's platform as NCCL reads it.
PlatformHost platform_host(const sg4::Host* host, int index) {
  PlatformHost out{host->get_name(), {}, index};
  for (const auto& [key, value] : *host->get_properties()) out.properties.emplace_back(key, value);
  return out;
}

// What NCCL's algorithms read of SimGrid's platform: the ranks' hosts, the reducing switches,
// and the ranks' routes with some of them.
void describe_hosts_for_nccl(const std::vector<sg4::Host*>& hosts, const std::vector<sg4::Host*>& switches,
                             ModelPlatform& platform) {
  for (size_t r = 0; r < hosts.size(); ++r) platform.rank_hosts.push_back(platform_host(hosts[r], static_cast<int>(r)));
  for (size_t s = 0; s < switches.size(); ++s)
    platform.switch_hosts.push_back(platform_host(switches[s], static_cast<int>(s)));
  platform.with_switches = [hosts, switches](const std::vector<int>& chosen) {
    std::vector<sg4::Host*> extra;
    for (int s : chosen) extra.push_back(switches[static_cast<size_t>(s)]);
    return std::shared_ptr<const Network>(std::make_shared<const RouteCache>(hosts, std::move(extra)));
  };
}

// `collsim model` on a generated platform: no engine, the routes from its structure.
RunPlan plan_on_structure(const Scenario& asked, RunPlan plan, const PlanOptions& options, GeneratedPlatform generated) {
  const Scenario& scenario = plan.scenario;
  plan.workers = static_cast<int>(generated.places.ranks());
  if (scenario.collective.root >= plan.workers)
    throw InputError(fmt::format("collective.root: {} is not a rank; allowed: 0 to {}", scenario.collective.root,
                                 plan.workers - 1));
  plan.platform.source = scenario.topology;
  plan.platform.kind = "generator";
  plan_choice_and_payload(plan);
  plan.platform.gpu_transport = gpus_only(*parse_generator(scenario.topology, "topology")) && wants_gpu_transport(scenario);
  ModelPlatform platform{generated.network, generated.places, {}, {}, {}, {}, plan.platform.gpu_transport};
  if (runs_nccl(scenario) || platform.gpu_transport || runs_nvls_level(scenario))
    describe_structure_for_nccl(generated, platform);
  plan.locality = plan_model(options.auto_simulated, platform, plan);
  plan.choice.parameters = algorithm_parameters(plan);
  if (options.topology_bound)
    plan.topology_bound = topology_cut_bound(scenario.collective.kind, *plan.model.network, platform.places,
                                             scenario.collective.root, plan.model.bytes(plan.model.elems), 64, 16,
                                             ranks_alike(scenario, plan, generated.hosts));
  plan_the_rest(asked, options, plan);
  return plan;
}

}  // namespace

std::shared_ptr<const GeneratedPlatform> model_structure(const Scenario& scenario) {
  PlanOptions options;
  options.model_only = true;
  std::optional<GeneratedPlatform> generated;
  const long long hosts = check_limits(scenario, true).hosts;
  if (!needs_simgrid_platform(scenario, options, hosts, generated).empty() || !generated) return nullptr;
  return std::make_shared<const GeneratedPlatform>(std::move(*generated));
}

RunPlan plan_run(const Scenario& asked, const PlanOptions& options, SimGridGuard& guard) {
  const Scenario scenario = as_picked(asked, options.auto_nccl);
  RunPlan plan;
  plan.scenario = scenario;
  const SimGridOptions settings = simgrid_options(scenario, options.cfg);
  check_simgrid_options(settings);
  plan.limits = check_limits(scenario, options.model_only);
  plan.model_only = options.model_only;
  if (options.model_only) {
    std::optional<GeneratedPlatform> generated;
    plan.model_routes = needs_simgrid_platform(scenario, options, plan.limits.hosts, generated);
    if (generated) return plan_on_structure(asked, std::move(plan), options, std::move(*generated));
  }
  sg4::Engine& engine = create_engine(settings, guard);

  std::vector<sg4::Host*> all_hosts, switches, hosts;
  on_the_platform(scenario, [&] { hosts = plan_platform(engine, guard, plan, all_hosts, switches); });
  plan_choice_and_payload(plan);

  on_the_platform(scenario, [&] {
    ModelPlatform platform{std::make_shared<const RouteCache>(hosts), places_of(hosts, all_hosts), hosts, {}, {}, {},
                           plan.platform.gpu_transport};
    if (runs_nccl(scenario) || platform.gpu_transport || runs_nvls_level(scenario))
      describe_hosts_for_nccl(hosts, switches, platform);
    plan.locality = plan_model(options.auto_simulated, platform, plan);
    recount_placed_servers(plan);
    plan.choice.parameters = algorithm_parameters(plan);
    plan.faults = resolve_faults(scenario, engine, all_hosts, hosts, routes_of(plan.model));
    plan.control_host = choose_control_host(plan.faults, all_hosts, hosts)->get_name();
    if (options.topology_bound)
      plan.topology_bound = topology_cut_bound(scenario.collective.kind, routes_of(plan.model), platform.places,
                                               scenario.collective.root, plan.model.bytes(plan.model.elems), 64, 16,
                                               ranks_alike(scenario, plan, all_hosts.size()));
  });
  plan_the_rest(asked, options, plan);
  return plan;
}

}  // namespace collsim
