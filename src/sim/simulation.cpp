#include "sim/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <iostream>
#include <simgrid/Exception.hpp>
#include <limits>
#include <memory>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <stdexcept>
#include <tuple>

#include "algorithms/algorithms.hpp"
#include "algorithms/message_counts.hpp"
#include "algorithms/registry.hpp"
#include "comm/comm_group.hpp"
#include "platform/platform.hpp"
#include "model/contention.hpp"
#include "model/route_cache.hpp"
#include "sim/input_data.hpp"
#include "sim/auto_choice.hpp"
#include "sim/locality.hpp"
#include "sim/nccl_run.hpp"
#include "sim/coordinator.hpp"
#include "sim/detector.hpp"
#include "sim/faults.hpp"
#include "sim/run_limits.hpp"
#include "util/atomic_file.hpp"
#include "sim/fault_effects.hpp"
#include "sim/simgrid_guard.hpp"
#include "sim/worker.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

// Layered training: the buckets' places in the carried elements (none without layers).
std::vector<BucketSlice> plan_bucket_slices(const Scenario& scenario, const Payload& payload) {
  const TrainingSpec& training = scenario.training;
  if (!training.has_layers()) return {};
  const double bytes_per_parameter = static_cast<double>(dtype_size(scenario.collective.dtype));
  const auto buckets = training.fusion ? plan_fusion(training.layers, bytes_per_parameter, training.fusion->buffer,
                                                     training.fusion->cycle)
                                       : plan_buckets(training.layers, bytes_per_parameter, training.bucket);
  auto slices = slice_buckets(buckets, total_parameters(training.layers), payload.carried_elems);
  if (slices.empty())
    throw InputError(fmt::format("{}: {} buckets but {} element{} carried per rank: raise it or "
                                 "collective.carried_elements to at least {}",
                                 training.fusion ? "training.fusion.buffer" : "training.bucket", buckets.size(), payload.carried_elems, payload.carried_elems == 1 ? "" : "s",
                                 buckets.size()));
  return slices;
}

// What each iteration of training does besides one collective: its buckets and batch.
void plan_iterations(const Scenario& scenario, RunState& state, SimResult& result) {
  state.setup.buckets = plan_bucket_slices(scenario, result.payload);
  result.buckets = static_cast<int>(state.setup.buckets.size());
  for (const BucketSlice& slice : state.setup.buckets) result.bucket_plan.push_back(slice.bucket);
  result.batch = scenario.training.batch;
  const TrainingSpec& training = scenario.training;
  if (!training.has_layers()) return;
  if (result.workers > max_activity_ranks)
    result.notes.push_back(fmt::format("the trace's activities (compute and comm lanes) list ranks 0 to {} of {}",
                                       max_activity_ranks - 1, result.workers));
  const double bytes_per_parameter = static_cast<double>(dtype_size(scenario.collective.dtype));
  result.memory_per_worker = memory_per_worker(total_parameters(training.layers), bytes_per_parameter,
                                               training.sharding, result.workers);
  result.sharding = training.sharding;
  if (training.sharding == Sharding::none) return;
  const auto halves = allreduce_halves(scenario.collective.algorithm);
  state.setup.shard_reduce_scatter = &find_algorithm(Collective::reduce_scatter, halves->first, "collective.algorithm");
  state.setup.shard_allgather = &find_algorithm(Collective::allgather, halves->second, "collective.algorithm");
  if (training.sharding != Sharding::zero3) return;
  state.setup.zero3 = plan_zero3(training.layers, result.bucket_plan, training.overlap == Overlap::forward);
  result.sharded_buckets = state.setup.buckets;
  // The model everyone starts from (zeros for a model trained from scratch).
  state.record.owned_parameters = Buffer(scenario.collective.dtype, result.payload.carried_elems);
  for (size_t i = 0; i < state.record.owned_parameters.size(); ++i)
    state.record.owned_parameters.set(i, training.has_model() ? 0.0L : 1 + static_cast<long double>(i % 251) / 256);
}

// The notes a user should read about the carried elements (logical vs carried size).
void note_payload(const Scenario& scenario, SimResult& result) {
  if (result.payload.downscaled()) {
    const Payload& payload = result.payload;
    std::string note = fmt::format("memory holds {} of the {} elements per rank; each stands for {:g} bytes",
                                   payload.carried_elems, payload.logical_elems, payload.bytes_per_elem);
    // A fraction such as 48.0001 reads like a bug unless it says where it comes from.
    if (payload.bytes_per_elem != std::floor(payload.bytes_per_elem))
      note += fmt::format(" on average ({:g} bytes / {} elements; each message's bytes are rounded to whole bytes)",
                          payload.logical_bytes, payload.carried_elems);
    result.notes.push_back(note);
  }
  if (scenario.collective.carried_elements && *scenario.collective.carried_elements > result.payload.logical_elems)
    result.notes.push_back(fmt::format("carried_elements {} is more than the {} elements of the message: carrying {}",
                                       *scenario.collective.carried_elements, result.payload.logical_elems,
                                       result.payload.carried_elems));
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

// The model's alpha and B for an algorithm: the worst route between ranks that talk to
// each other (algorithms/partners.hpp), either way.
void read_partner_routes(const RankPairs& pairs, ModelInput& model) {
  const RouteCache& routes = routes_of(model);
  model.alpha = 0;
  model.bandwidth = std::numeric_limits<double>::infinity();
  for (auto [a, b] : pairs) {
    if (a == b) continue;
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      const NetworkRoute& route = routes.route(from, to);
      model.alpha = std::max(model.alpha, route.latency);
      for (int link : route.links) model.bandwidth = std::min(model.bandwidth, routes.link(link).bandwidth);
    }
  }
}

// The lower bound's view of the platform (the ranks' own links, the shortest route).
void read_injection(int root, ModelInput& model) {
  const RouteCache& routes = routes_of(model);
  const int p = model.p;
  if (p == 1) return;
  // The lower bound's inputs: each rank's own links (the first link of its route to its
  // ring neighbour, the last link of the route into it) and the shortest latency.
  std::vector<double> out(static_cast<size_t>(p), 0), in(static_cast<size_t>(p), 0);
  model.min_alpha = std::numeric_limits<double>::infinity();
  for (int r = 0; r < p; ++r) {
    const int next = (r + 1) % p;
    const NetworkRoute& route = routes.route(r, next);
    model.min_alpha = std::min(model.min_alpha, route.latency);
    // (a route without links limits nothing)
    const double unlimited = std::numeric_limits<double>::infinity();
    out[static_cast<size_t>(r)] = route.links.empty() ? unlimited : routes.link(route.links.front()).bandwidth;
    in[static_cast<size_t>(next)] = route.links.empty() ? unlimited : routes.link(route.links.back()).bandwidth;
  }
  // Up to 128 ranks, every pair (a latency-optimal tree may avoid the slow pairs); above,
  // the ring neighbours' and the root's routes only (p^2 lookups would cost seconds).
  auto shortest = [&](int a, int b) {
    if (a != b) model.min_alpha = std::min(model.min_alpha, routes.route(a, b).latency);
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


}  // namespace

RunState::RunState() = default;
RunState::~RunState() = default;

ModelInput RunSetup::model_for(const CommGroup& group) const {
  ModelInput in = model;
  in.p = group.size();
  if (!in.group_sizes.empty()) in.group_sizes = group_sizes_of(rank_localities, group.members());
  // the group's ranks on the platform: its members' hosts (the route cache is by world rank)
  in.endpoints = group.members();
  if (!in.locality.empty()) {
    in.locality.clear();
    for (int world : group.members()) in.locality.push_back(rank_localities[static_cast<size_t>(world)]);
  }
  return in;
}

std::shared_ptr<CommGroup> RunState::new_group(int epoch, std::vector<int> members) {
  auto group = std::make_shared<CommGroup>(epoch, std::move(members), setup.payload.bytes_per_elem, record.messages);
  std::vector<int> localities;
  for (int world : group->members()) localities.push_back(setup.rank_localities[static_cast<size_t>(world)]);
  group->set_localities(std::move(localities));
  // A scenario without faults has nothing to stall a wait (its deadlines come from the
  // platform as built, and no fault can change it): its waits go unwatched, as under
  // `none`. Watched, their deadlines cost a healthy ring at p = 256 about 11% more
  // instructions than `none`, most of it SimGrid's timers (docs/recovery.md, per-wait
  // deadlines).
  group->set_watch(setup.scenario->faults.empty() ? nullptr : detector.get());
  group->set_overhead(setup.model.overhead);
  group->set_message_cost(setup.model.message_cost);
  group->track_waits(&waits);
  return group;
}

namespace {

// Carried elements per pipeline segment (at least one).
size_t segment_elements(double segment_bytes, const Payload& payload) {
  const double elements = std::round(segment_bytes / payload.bytes_per_elem);
  return elements < 1 ? 1 : static_cast<size_t>(std::min(elements, 1e18));
}

// The model's input from the scenario and payload; it prices each algorithm's schedule on
// the platform's own routes, each read once (RouteCache).
void start_model_input(const Scenario& scenario, const Payload& payload, const std::vector<sg4::Host*>& hosts,
                       const std::vector<sg4::Host*>& switches, ModelInput& model) {
  model.p = static_cast<int>(hosts.size());
  model.elems = payload.carried_elems;
  model.overhead = scenario.message_overhead;
  model.bytes_per_elem = payload.bytes_per_elem;
  model.segment_elems = segment_elements(scenario.collective.segment, payload);
  model.network = std::make_shared<const RouteCache>(hosts, switches);
  for (size_t s = 0; s < switches.size(); ++s) model.switch_endpoints.push_back(static_cast<int>(hosts.size() + s));
  model.root = scenario.collective.root;
  model.channels = scenario.collective.channels;
  if (scenario.collective.reduce_bandwidth) model.reduce_bandwidth = *scenario.collective.reduce_bandwidth;
}

int training_samples(const Scenario& scenario, int p) {
  return scenario.training.samples > 0 ? scenario.training.samples : 64 * p;
}

// Recovery's detector watches every wait; the summary shows the deadline of one chunk's
// transfer (n/p) on the model's route.
void watch_waits(RunState& state, SimResult& result) {
  state.detector = std::make_unique<Detector>(state.setup, state.membership);
  const ModelInput& m = state.setup.model;
  result.timeout =
      state.detector->limit(m.message_time((m.elems + static_cast<size_t>(m.p) - 1) / static_cast<size_t>(m.p)));
}

// A fixed timeout shorter than one chunk's transfer makes healthy waits suspicious.
void warn_about_short_timeout(const RunState& state, SimResult& result) {
  const RecoverySpec& recovery = state.setup.scenario->recovery;
  if (recovery.policy != RecoveryPolicy::rebuild || recovery.timeout_is_factor) return;
  const ModelInput& m = state.setup.model;
  const double chunk = m.message_time((m.elems + static_cast<size_t>(m.p) - 1) / static_cast<size_t>(m.p));
  if (recovery.timeout < chunk) {
    result.warnings.push_back(
        fmt::format("recovery.timeout {} is shorter than one chunk's transfer ({}): healthy waits will look late",
                    recovery.timeout_text, format_time(chunk)));
  }
}

// The paragraph a user reads when the group never completes (recovery.policy "none").
std::string describe_stall(const RunState& state) {
  std::string text;
  int stuck_round = state.setup.scenario->training.rounds;
  for (const WorkerState& w : state.workers)
    if (w.fate != WorkerFate::finished) stuck_round = std::min(stuck_round, w.round);
  text += fmt::format("the group stalled in round {}: its {} never completed.", stuck_round,
                      collective_name(state.setup.scenario->collective.kind));
  for (size_t r = 0; r < state.workers.size(); ++r) {
    const WorkerState& w = state.workers[r];
    if (w.fate == WorkerFate::preempted)
      text += fmt::format(" Rank {} ({}) was preempted at {}.", r, state.setup.rank_hosts[r]->get_name(), format_time(w.fate_time));
  }
  int listed = 0, more = 0;
  for (size_t r = 0; r < state.workers.size(); ++r) {
    const WorkerState& w = state.workers[r];
    if (w.fate == WorkerFate::preempted || w.fate == WorkerFate::finished) continue;
    const WaitState& wait = state.waits[r];
    std::string line;
    if (w.fate == WorkerFate::aborted)
      line = fmt::format(" Rank {} lost its transfer with rank {} at {}.", r, wait.peer, format_time(w.fate_time));
    else if (wait.peer >= 0)
      line = fmt::format(" Rank {} waits to {} rank {} since {}.", r, wait.what, wait.peer, format_time(wait.since));
    else
      line = fmt::format(" Rank {} waits outside the collective.", r);
    if (listed++ < 8) text += line;
    else ++more;
  }
  if (more > 0) text += fmt::format(" ({} more ranks wait likewise.)", more);
  text += " With recovery.policy \"none\" the group waits forever; \"rebuild\" would drop the lost worker and go on.";
  return text;
}

// Each rank's state, for p ranks and `rounds` rounds.
void prepare_ranks(RunState& state, int p, int rounds) {
  state.workers.assign(static_cast<size_t>(p), WorkerState{});
  state.waits.assign(static_cast<size_t>(p), WaitState{});
  state.host_speed_factor.assign(static_cast<size_t>(p), 1.0);
  state.record.slowed_work.assign(static_cast<size_t>(p), 0);
  state.record.rounds.assign(static_cast<size_t>(rounds), std::vector<RankRound>(static_cast<size_t>(p)));
  state.record.round_loss.assign(static_cast<size_t>(rounds), std::numeric_limits<double>::quiet_NaN());
}

void collect_results(RunState& state, SimResult& result) {
  result.simulated_time = sg4::Engine::get_clock();
  result.messages = std::move(state.record.messages);
  result.faults = state.record.fault_events;
  result.recoveries = state.record.recoveries;
  result.activities = std::move(state.record.activities);
  result.gather_failure = state.record.gather_failure;
  std::stable_sort(result.activities.begin(), result.activities.end(), [](const Activity& a, const Activity& b) {
    return std::tie(a.rank, a.round, a.epoch, a.lane, a.start) < std::tie(b.rank, b.round, b.epoch, b.lane, b.start);
  });
  if (!!state.membership.gave_up()) result.stall = "recovery gave up: " + state.membership.abort_reason() + ".";
  const CommGroup& last = state.membership.current();
  for (int g = 0; g < last.size(); ++g) result.final_group.push_back(last.world_rank(g));
  // A run stopped at recovery.min_workers: who was left is the group without the ranks it would have dropped.
  if (!state.record.recoveries.empty() && state.record.recoveries.back().stopped) result.final_group = state.record.recoveries.back().group;

  const bool every_member_finished = std::all_of(result.final_group.begin(), result.final_group.end(), [&](int w) {
    return state.workers[static_cast<size_t>(w)].fate == WorkerFate::finished;
  });
  if (!every_member_finished && result.stall.empty()) result.stall = describe_stall(state);

  for (size_t round = 0; round < state.record.rounds.size(); ++round) {
    RoundRecord record;
    record.round = static_cast<int>(round);
    record.start = record.collective_start = std::numeric_limits<double>::infinity();
    record.epoch = -1;
    uint64_t first_hash = 0;
    for (size_t w = 0; w < state.record.rounds[round].size(); ++w) {
      const RankRound& t = state.record.rounds[round][w];
      if (t.end < 0) continue;
      // Count a rank only in the epoch that completed the round last.
      record.epoch = std::max(record.epoch, t.epoch);
    }
    if (record.epoch < 0) break;  // nobody completed this round
    for (size_t w = 0; w < state.record.rounds[round].size(); ++w) {
      const RankRound& t = state.record.rounds[round][w];
      if (t.end < 0 || t.epoch != record.epoch) continue;
      if (record.group.empty()) first_hash = t.model_hash;
      record.group.push_back(static_cast<int>(w));
      record.start = std::min(record.start, t.start);
      record.compute_end = std::max(record.compute_end, t.compute_end);
      record.collective_start = std::min(record.collective_start, t.collective_start);
      record.end = std::max(record.end, t.end);
      record.comm = std::max(record.comm, t.comm);
      if (t.model_hash != first_hash) record.models_identical = false;
    }
    if (state.setup.regression) record.loss = state.record.round_loss[round];
    result.models_identical = result.models_identical && record.models_identical;
    result.rounds.push_back(record);
  }
  for (RecoveryEvent& event : result.recoveries)
    for (const RoundRecord& record : result.rounds)
      if (record.round == event.round && record.epoch >= event.epoch_after) event.round_completed = record.end;
  result.rounds_completed = static_cast<int>(result.rounds.size());
  // The run ends when the last round completes; a dropped straggler still computing
  // afterwards does not count.
  if (result.stall.empty() && !result.rounds.empty()) result.simulated_time = result.rounds.back().end;
  if (!result.stall.empty()) return;
  auto inputs = std::make_shared<std::vector<Buffer>>();
  for (int w : result.final_group) {
    // moved, not copied: at p = 8192 the carried data of all ranks is 256 MiB a copy
    result.results.push_back(std::move(state.workers[static_cast<size_t>(w)].result));
    if (state.setup.keep_inputs) inputs->push_back(std::move(state.workers[static_cast<size_t>(w)].input));
  }
  if (state.setup.keep_inputs)
    result.input_of = [inputs](int g, Buffer& buf) { buf = (*inputs)[static_cast<size_t>(g)]; };
  else
    result.input_of = [input = state.setup.input, group = result.final_group](int g, Buffer& buf) {
      input(group[static_cast<size_t>(g)], buf);
    };
}

}  // namespace

namespace {

// NCCL's choice (the tuner's for "nccl", the protocol and channels of a named nccl-*
// algorithm) and its transport, which every message of the run and of the model pays.
void use_nccl(const Scenario& scenario, const std::vector<sg4::Host*>& hosts, const std::vector<sg4::Host*>& switches,
              SimResult& result) {
  ModelInput& model = result.model;
  const auto routes = std::dynamic_pointer_cast<const RouteCache>(model.network);
  const NcclSetup nccl = setup_nccl(scenario, scenario.collective.algorithm, hosts, switches, routes, scenario.collective.size);
  result.algorithm = &find_algorithm(scenario.collective.kind, nccl.algorithm, "collective.algorithm");
  model.channels = nccl.lanes;
  model.fifo = nccl::fifo_chunks(nccl.choice.chosen.algo, nccl.choice.chosen.proto);
  model.message_cost = nccl.transport;
  result.notes.push_back(nccl.choice.why);
  result.notes.push_back(describe_nccl(nccl));
}

// The model's input for this run (routes, groups, alpha and B of the chosen algorithm's
// partners) and, for --algorithm auto, the choice; returns the ranks' locality groups.
RankLocality prepare_model(const Scenario& scenario, const SimOptions& options, const std::vector<sg4::Host*>& hosts,
                           const std::vector<sg4::Host*>& switches, bool automatic, SimResult& result) {
  ModelInput& model = result.model;
  const int p = static_cast<int>(hosts.size());
  start_model_input(scenario, result.payload, hosts, switches, model);
  if (runs_nccl(scenario) && !automatic) use_nccl(scenario, hosts, switches, result);
  const int root = scenario.collective.root, servers = scenario.collective.servers.value_or(1);
  auto model_for = [&](const AlgorithmInfo&) { return model; };
  read_injection(scenario.collective.root, model);
  check_servers(scenario.collective, p);
  model.servers = scenario.collective.servers.value_or(1);
  // The hierarchical allreduce's groups and their costs, for its run and for auto's ranking.
  const RankLocality locality = rank_locality(scenario, hosts);
  if (scenario.collective.kind == Collective::allreduce && (automatic || result.algorithm->run == allreduce_hierarchical)) {
    read_hierarchy(locality.ids, model);
    model.locality = locality.ids;
  }
  if (model.channels > 1 || result.algorithm->uses.nccl) model.locality = locality.ids;  // rings turn inside the groups
  if (automatic)
    result.algorithm = &choose_algorithm(scenario.collective.kind, options.auto_simulated, model_for, result);
  if (scenario.network == NetworkModel::realistic) result.notes.push_back("model time: " + realistic_network_caveat());
  // alpha and B as people read them: the worst route between the chosen algorithm's partners
  read_partner_routes(result.algorithm->partners(p, root, servers), model);
  if (result.algorithm->uses.groups) result.notes.push_back(describe_hierarchy(locality, model));
  if (model.channels > 1)
    result.notes.push_back(fmt::format("{} channels: {} slices of about {}, each on its own rings, all at once; channel "
                                       "c's rings turn by c members inside each group ({})",
                                       model.channels, model.channels,
                                       format_size(model.bytes(model.elems) / model.channels), locality.source));
  if (result.algorithm->uses.segment) {
    const double effective = static_cast<double>(simulated_bytes(model.segment_elems, model.bytes_per_elem));
    if (effective != scenario.collective.segment)
      result.notes.push_back(fmt::format("segments of {} bytes (the requested {} bytes rounded to whole carried elements)",
                                         effective, scenario.collective.segment));
  }
  return locality;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> simgrid_options(const Scenario& scenario,
                                                                const std::vector<std::string>& user_cfg) {
  std::vector<std::pair<std::string, std::string>> options;
  for (const auto& option : network_model_config(scenario.network)) options.emplace_back(option, "network");
  // SimGrid ends, at each time step, every transfer or computation due within
  // surf/precision after it. Its default, 1 ns, is coarser than a short reduction (64 B at
  // 100 GB/s: 0.64 ns, rounded away) and lets any timer (a recovery check) that fires just
  // before another transfer's end move that end: 1 ps keeps both exact, at the same speed
  // (docs/performance.md). Users can set it back with --cfg.
  options.emplace_back("surf/precision:1e-12", "collsim");
#ifdef COLLSIM_SANITIZE
  // ASan follows real thread stacks, not raw context switches (CMakeLists.txt).
  options.emplace_back("contexts/factory:thread", "collsim");
#else
  // Small actor stacks without guard pages keep p=1024 fast (our actors are shallow:
  // algorithms loop, they do not recurse); users can override both.
  options.emplace_back("contexts/stack-size:64", "collsim");
  options.emplace_back("contexts/guard-size:0", "collsim");
#endif
  for (size_t i = 0; i < scenario.cfg.size(); ++i) options.emplace_back(scenario.cfg[i], fmt::format("cfg.{}", i));
  for (const auto& option : user_cfg) options.emplace_back(option, "--cfg");
  return options;
}

namespace {

// Whole vectors a rank of the scenario's algorithm holds at once (plan_payload shares the
// carried budget among them); auto and sharded training plan for one.
double vectors_held(const Scenario& scenario, int p) {
  const CollectiveSpec& collective = scenario.collective;
  if (chosen_at_run_time(collective.algorithm) || scenario.training.sharding != Sharding::none) return 1;
  return vectors_held_per_rank(find_algorithm(collective.kind, collective.algorithm, "collective.algorithm"), p);
}

}  // namespace

// The process's one SimGrid engine (SimGrid allows one per process: every simulation
// runs in a process of its own), with the scenario's options set before it runs. Refuses
// a run beyond the stated limits before building anything.
sg4::Engine& create_engine(const Scenario& scenario, const SimOptions& options, SimGridGuard& guard) {
  static bool engine_created = false;
  if (engine_created) throw std::logic_error("run_simulation: SimGrid allows one engine per process");
  engine_created = true;

  const auto settings = simgrid_options(scenario, options.cfg);
  for (const auto& [option, field] : settings) check_simgrid_option(option, field);
  // Refuse what would not fit the stated limits before building anything.
  const long long host_count = check_platform_size(scenario.topology, scenario.source_dir);
  {
    const int ranks = scenario.workers.value_or(static_cast<int>(host_count));
    const Payload planned = plan_payload(scenario.collective.size, scenario.collective.dtype, ranks,
                                         scenario.collective.carried_elements, scenario.collective.channels,
                                         vectors_held(scenario, ranks));
    std::vector<size_t> buckets;
    for (const BucketSlice& slice : plan_bucket_slices(scenario, planned)) buckets.push_back(slice.count);
    check_run_size(scenario, ranks, planned, segment_elements(scenario.collective.segment, planned), buckets);
  }

  // The engine lives until the process ends: SimGrid cannot make a second one anyway.
  // Options the engine reads while it is created (the context factory) go in its
  // command line: set afterwards, SimGrid would silently ignore them.
  std::vector<std::string> arguments{"collsim", "--log=root.thresh:warning", "--log=no_loc"};
  for (const auto& [option, field] : settings)
    if (option.rfind("contexts/factory:", 0) == 0) arguments.push_back("--cfg=" + option);
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(arguments.size());
  static std::unique_ptr<sg4::Engine> engine = std::make_unique<sg4::Engine>(&argc, argv.data());
  guard.catch_crashes();
  remove_temporaries_on_interrupt();  // the engine installed its own SIGINT handler
  guard.set_context("SimGrid options");
  // Options one by one, so that an error names the one at fault and where it came from.
  for (const auto& [option, field] : settings) {
    if (option.rfind("contexts/factory:", 0) == 0) continue;  // given at creation
    try {
      sg4::Engine::set_config(option);
    } catch (const std::exception& error) {
      const std::string message = error.what();
      throw InputError(fmt::format("{}: {}: {}", field, option, message.substr(0, message.find('\n'))));
    }
  }
  return *engine;
}

SimResult run_simulation(const Scenario& scenario, const SimOptions& options) {
  SimGridGuard guard;
  sg4::Engine& engine = create_engine(scenario, options, guard);

  SimResult result;
  guard.set_context(fmt::format("topology: SimGrid stopped on '{}'", scenario.topology));
  const PlatformInfo platform =
      build_platform(engine, scenario.topology, scenario.source_dir,
                     {.pxn = runs_nccl(scenario) && scenario.nccl.pxn, .latency_in_transport = runs_nccl(scenario)});
  const int p = scenario.workers.value_or(static_cast<int>(platform.hosts.size()));
  if (scenario.collective.root >= p)
    throw InputError(fmt::format("collective.root: {} is not a rank; allowed: 0 to {}", scenario.collective.root, p - 1));
  const std::vector<sg4::Host*> hosts = place_ranks(scenario, platform, p, engine);

  result.workers = p;
  result.topology = platform.source;
  result.platform_kind = platform.kind;
  result.link_count = platform.link_count;
  for (const sg4::Host* host : platform.hosts) result.all_hosts.push_back(host->get_name());
  for (const sg4::Host* host : hosts) result.rank_hosts.push_back(host->get_name());
  const bool automatic = scenario.collective.algorithm == "auto";
  if (!chosen_at_run_time(scenario.collective.algorithm))
    result.algorithm = &find_algorithm(scenario.collective.kind, scenario.collective.algorithm, "collective.algorithm");
  result.payload = plan_payload(scenario.collective.size, scenario.collective.dtype, p,
                                scenario.collective.carried_elements, scenario.collective.channels,
                                vectors_held(scenario, p));
  note_payload(scenario, result);

  const RankLocality locality = prepare_model(scenario, options, hosts, runs_nccl(scenario) ? platform.switches : std::vector<sg4::Host*>{}, automatic, result);
  const ModelInput& model = result.model;
  const std::vector<ResolvedFault> faults = resolve_faults(scenario, engine, platform.hosts, hosts, routes_of(model));
  if (options.check_only) return result;
  if (options.topology_bound)
    result.topology_bound = topology_cut_bound(scenario.collective.kind, routes_of(model), platform.hosts, scenario.collective.root, model.bytes(model.elems));

  // The run's shared state: workers, fault injectors and the coordinator meet here
  // (sim/run_state.hpp says how long it lives).
  const auto shared_state = std::make_shared<RunState>();
  RunState& state = *shared_state;
  state.setup.scenario = &scenario;
  state.setup.algorithm = result.algorithm;
  state.setup.payload = result.payload;
  state.setup.model = model;
  state.setup.op = std::make_unique<ReduceOp>(scenario.collective.op, scenario.collective.dtype);
  if (scenario.collective.reduce_bandwidth) {
    // a reduction of m simulated bytes keeps the reducing rank busy m / reduce_bandwidth
    const double bytes_per_elem = result.payload.bytes_per_elem, bandwidth = *scenario.collective.reduce_bandwidth;
    state.setup.op->set_cost([bytes_per_elem, bandwidth](size_t elements) {
      sg4::this_actor::sleep_for(static_cast<double>(simulated_bytes(elements, bytes_per_elem)) / bandwidth);
    });
  }
  state.setup.args = CollectiveArgs{state.setup.op.get(), scenario.collective.root, model.segment_elems, model.servers,
                              model.channels, model.fifo};
  state.setup.rank_hosts = hosts;
  state.setup.rank_localities = locality.ids;
  state.setup.input = options.input ? options.input : [op = scenario.collective.op, seed = scenario.seed](int rank, Buffer& buf) {
    fill_input(buf, rank, op, seed);
  };
  state.setup.keep_inputs = scenario.recovery.policy != RecoveryPolicy::none || scenario.training.has_model();
  plan_iterations(scenario, state, result);
  if (scenario.training.has_model())
    state.setup.regression = std::make_unique<LinearRegression>(scenario.training.parameters, training_samples(scenario, p),
                                                          scenario.seed);
  prepare_ranks(state, p, scenario.training.rounds);

  std::vector<int> everyone(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) everyone[static_cast<size_t>(r)] = r;
  if (scenario.recovery.policy == RecoveryPolicy::rebuild) watch_waits(state, result);
  state.membership.start(state.new_group(0, everyone));
  warn_about_short_timeout(state, result);

  state.setup.control_host = choose_control_host(faults, platform.hosts, hosts);
  start_fault_injectors(state, faults);
  if (state.detector != nullptr) start_coordinator(state, *state.detector);

  for (int r = 0; r < p; ++r)
    sg4::Actor::create(fmt::format("rank-{}", r), hosts[static_cast<size_t>(r)], [shared_state, r] { run_worker(*shared_state, r); });
  LinkUsageRecorder link_usage;
  link_usage.start(std::dynamic_pointer_cast<const RouteCache>(model.network), state.record.messages);
  link_usage.watch(faulty_links(faults));
  state.record.messages.set_limit(options.kept_messages);
  engine.run();
  if (state.record.failure) std::rethrow_exception(state.record.failure);
  collect_results(state, result);
  result.link_usage = link_usage.finish(result.messages, result.simulated_time);
  std::vector<int> dropped;
  for (const auto& recovery : result.recoveries)
    dropped.insert(dropped.end(), recovery.dropped_ranks.begin(), recovery.dropped_ranks.end());
  note_fault_effects(result.faults, result.link_usage, state.record.slowed_work, dropped, result.simulated_time);
  if (!result.stall.empty()) guard.discard();  // collsim explains the stall itself
  return result;
}


}  // namespace collsim
