#include "sim/simulation.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <tuple>

#include "algorithms/algorithms.hpp"
#include "algorithms/hierarchy.hpp"
#include "comm/comm_group.hpp"
#include "model/route_cache.hpp"
#include "sim/async_servers.hpp"
#include "sim/fault_effects.hpp"
#include "sim/faults.hpp"
#include "sim/recovery_adapter.hpp"
#include "sim/server_rebuilds.hpp"
#include "sim/streams.hpp"
#include "sim/worker.hpp"
#include "util/units.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

RunState::RunState() = default;
RunState::~RunState() = default;

ModelInput RunSetup::model_for(const CommGroup& group) const {
  return model_for_members(plan->model, plan->locality.ids, group.members());
}

std::shared_ptr<CommGroup> RunState::new_group(int epoch, std::vector<int> members) {
  auto group = std::make_shared<CommGroup>(epoch, std::move(members), record.messages);
  std::vector<int> localities;
  for (int world : group->members()) localities.push_back(setup.plan->locality.ids[static_cast<size_t>(world)]);
  group->set_localities(std::move(localities));
  // A scenario without faults has nothing to stall a wait (its deadlines come from the
  // platform as built, and no fault can change it): its waits go unwatched, as under
  // `none`. Watched, their deadlines cost a healthy ring at p = 256 about 11% more
  // instructions than `none`, most of it SimGrid's timers (docs/recovery.md, per-wait
  // deadlines).
  group->set_watch(setup.scenario->faults.empty() ? nullptr : recovery.get());
  group->set_overhead(setup.plan->model.overhead);
  group->set_message_cost(setup.plan->model.message_cost);
  // the switches that reduce in the network (the first group's: NVLS runs without recovery)
  std::vector<SwitchPort> ports;
  for (size_t s = 0; s < setup.plan->switches.size(); ++s)
    ports.push_back({setup.plan->switches[s].kind, setup.plan->switches[s].endpoint, setup.plan->switches[s].members});
  if (!ports.empty()) group->set_switches(std::move(ports));
  group->track_waits(&waits);
  return group;
}

int training_samples(const Scenario& scenario, int p) {
  return scenario.training.samples > 0 ? scenario.training.samples : 64 * p;
}

namespace {


// Recovery's detector watches every wait; the summary shows the deadline of one chunk's
// transfer (n/p) on the model's route.
void watch_waits(RunState& state, SimResult& result) {
  state.recovery = std::make_unique<RecoveryAdapter>(state);
  const ModelInput& m = state.setup.plan->model;
  result.timeout =
      state.recovery->detector().limit(m.message_time((m.elems + static_cast<size_t>(m.p) - 1) / static_cast<size_t>(m.p)));
}

// A peer as the stall report names it: a rank, or a parameter server's process or a switch
// (the endpoints after the ranks, in the plan's order).
std::string peer_name(const RunState& state, int peer) {
  const auto p = static_cast<int>(state.workers.size());
  const std::vector<SwitchPlan>& switches = state.setup.plan->switches;
  if (peer < p || peer - p >= static_cast<int>(switches.size())) return fmt::format("rank {}", peer);
  const SwitchPlan& endpoint = switches[static_cast<size_t>(peer - p)];
  return fmt::format("{} {} (on {})", endpoint.kind == SwitchKind::server ? "parameter server" : "switch", peer - p,
                     endpoint.host);
}

// The paragraph a user reads when the group never completes (recovery.policy "none", or a
// stall that "rebuild" did not regroup around).
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
  bool server_lost = false;  // a preempted host that ran a parameter server's process
  for (const FaultEvent& event : state.record.fault_events) {
    if (event.kind != "preempt" || event.action != "applied") continue;
    const std::vector<SwitchPlan>& endpoints = state.setup.plan->switches;
    for (size_t s = 0; s < endpoints.size(); ++s)
      if (endpoints[s].kind == SwitchKind::server && endpoints[s].host == event.host) {
        text += fmt::format(" Parameter server {} ({}) was lost at {}.", s, event.host, format_time(event.time));
        server_lost = true;
      }
  }
  int listed = 0, more = 0;
  for (size_t r = 0; r < state.workers.size(); ++r) {
    const WorkerState& w = state.workers[r];
    if (w.fate == WorkerFate::preempted || w.fate == WorkerFate::finished) continue;
    const WaitState& wait = state.waits[r];
    std::string line;
    if (w.fate == WorkerFate::aborted)
      line = fmt::format(" Rank {} lost its transfer with {} at {}.", r, peer_name(state, wait.peer), format_time(w.fate_time));
    else if (wait.peer >= 0)
      line = fmt::format(" Rank {} waits to {} {} since {}.", r, wait.what, peer_name(state, wait.peer), format_time(wait.since));
    else
      line = fmt::format(" Rank {} waits outside the collective.", r);
    if (listed++ < 8) text += line;
    else ++more;
  }
  if (more > 0) text += fmt::format(" ({} more ranks wait likewise.)", more);
  if (server_lost)
    text += " The group waits forever: a lost server's shard of the model is gone (collsim restarts no server).";
  else if (state.setup.scenario->recovery.policy == RecoveryPolicy::none)
    text += " With recovery.policy \"none\" the group waits forever; \"rebuild\" would drop the lost worker and go on.";
  else
    text += " recovery.policy \"rebuild\" found no lost worker to drop here, so the group waits forever.";
  return text;
}

// Why identical collectives (buckets, rounds) are simulated each time in this run (empty: they may be
// replayed, sim/replay.hpp): anything that may share the network with a collective or
// change it during one turns replay off for the whole run.
std::string replay_off_reason(const RunPlan& plan) {
  const Scenario& scenario = plan.scenario;
  if (!scenario.training.replay) return "training.replay is false";
  if (!scenario.training.has_layers() && scenario.training.rounds == 1) return "one collective";
  const Collective kind = scenario.collective.kind;
  if (kind != Collective::allreduce && kind != Collective::reduce_scatter && kind != Collective::allgather)
    return fmt::format("a {} is not replayed (only allreduce, reduce-scatter and allgather)", collective_name(kind));
  if (scenario.recovery.policy != RecoveryPolicy::none) return "recovery.policy is not \"none\"";
  if (scenario.training.streams > 1) return "training.streams above 1";
  if (!plan.switches.empty()) return "switch or server actors take part in the collectives";
  if (!plan.training.server_pieces.empty()) return "parameter servers hold whole variables, each bucket its own";
  return "";
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
  result.updates = std::move(state.record.updates);
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
      record.comm_added = std::max(record.comm_added, t.comm_added);
      if (t.model_hash != first_hash) record.models_identical = false;
    }
    // A rank done early with the previous round (a leaf of a tree between nodes) enters this
    // one before the others have left that one: their time until then is the previous
    // round's, counted once (nodes:5:4, hierarchical with a tree between nodes: node 4 enters
    // round 1 10.7 ms before round 0 ends; counted from its entry round 1 took 1.32x the model).
    if (!result.rounds.empty()) record.collective_start = std::max(record.collective_start, result.rounds.back().end);
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
  if (state.bucket_verifier) result.verified_in_flight = state.bucket_verifier->merged();
  auto inputs = std::make_shared<std::vector<Buffer>>();
  for (int w : result.final_group) {
    // moved, not copied: at p = 8192 the carried data of all ranks is 256 MiB a copy
    result.results.push_back(std::move(state.workers[static_cast<size_t>(w)].result));
    if (state.setup.keep_inputs) inputs->push_back(std::move(state.workers[static_cast<size_t>(w)].input));
  }
  if (state.setup.keep_inputs)
    result.input_of = [inputs](int g, Buffer& buf) { buf = (*inputs)[static_cast<size_t>(g)]; };
  else
    result.input_of = [input = state.setup.plan->input, group = result.final_group](int g, Buffer& buf) {
      input(group[static_cast<size_t>(g)], buf);
    };
}

// What the engine makes of the plan before it runs: the hosts found by name, the
// reduction (and what it costs), the training model, every rank's state.
void set_up(RunState& state, const std::shared_ptr<const RunPlan>& plan) {
  const Scenario& scenario = plan->scenario;
  RunSetup& setup = state.setup;
  setup.plan = plan;
  setup.scenario = &plan->scenario;
  setup.algorithm = plan->choice.algorithm;
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  for (const std::string& name : plan->rank_hosts) setup.rank_hosts.push_back(engine.host_by_name(name));
  setup.control_host = engine.host_by_name(plan->control_host);
  setup.op = std::make_unique<ReduceOp>(scenario.collective.op, scenario.collective.dtype);
  if (scenario.collective.reduce_bandwidth) {
    // a reduction of m simulated bytes keeps the reducing rank busy m / reduce_bandwidth
    const double bytes_per_elem = plan->model.bytes_per_elem, bandwidth = *scenario.collective.reduce_bandwidth;
    setup.op->set_cost([bytes_per_elem, bandwidth](size_t elements) {
      sg4::this_actor::sleep_for(static_cast<double>(elements) * bytes_per_elem / bandwidth);
    });
  }
  const ModelInput& model = plan->model;
  setup.args = CollectiveArgs{setup.op.get(), scenario.collective.root, model.segment_elems, model.servers,
                              model.deployment, model.channels, model.fifo, model.intra_level, model.inter_level,
                              model.hop_inside, model.hop_across};
  setup.keep_inputs = scenario.recovery.policy != RecoveryPolicy::none || scenario.training.has_model();
  if (plan->training.zero3) {
    // The model everyone starts from (zeros for a model trained from scratch).
    state.record.owned_parameters =
        Buffer(scenario.collective.dtype, plan->payload.carried_elems, plan->payload.logical_elems);
    for (size_t i = 0; i < state.record.owned_parameters.carried(); ++i)
      state.record.owned_parameters.set(i, scenario.training.has_model() ? 0.0L : 1 + static_cast<long double>(i % 251) / 256);
  }
  if (scenario.training.has_model())
    setup.regression = std::make_unique<LinearRegression>(scenario.training.parameters,
                                                          training_samples(scenario, plan->workers), scenario.seed);
  prepare_ranks(state, plan->workers, scenario.training.rounds);
  if (plan->training.buckets_in_flight)
    state.bucket_verifier = std::make_unique<BucketVerifier>(plan->workers, scenario.collective.op, plan->input_at);
  state.replay = std::make_unique<CollectiveReplay>(plan->workers, replay_off_reason(*plan), state.record.messages,
                                                    scenario.collective.op, scenario.collective.dtype);
  std::vector<double> fault_times;  // (faults at a round: when it starts, sim/replay.hpp)
  for (const PlannedFault& fault : plan->faults) {
    if (!fault.spec.at) continue;
    fault_times.push_back(*fault.spec.at);
    if (fault.spec.duration) fault_times.push_back(*fault.spec.at + *fault.spec.duration);
  }
  state.replay->plan_faults(std::move(fault_times));
}

// What the switch actors run: the algorithm's switch side, or hierarchical's NVLS level's
// (collective.intra nvls), whose algorithm reduces in switches only with that level.
AlgorithmFn switch_side(const RunSetup& setup) {
  if (setup.algorithm->switch_run != nullptr) return setup.algorithm->switch_run;
  if (setup.plan->model.intra_level == HierarchyLevel::nvls) return hierarchical_nvls_switch;
  throw std::logic_error("switch actors for an algorithm without a switch side");
}

// The switches that reduce in the network and the parameter servers' processes
// (comm/switch_ops.hpp): each runs its side of the algorithm once per collective (each
// round's, or each of its buckets'), as peer size() + s of the first group, on its own data.
void start_switches(const std::shared_ptr<RunState>& shared_state) {
  const RunPlan& plan = *shared_state->setup.plan;
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  for (size_t s = 0; s < plan.switches.size(); ++s) {
    const bool server = plan.switches[s].kind == SwitchKind::server;
    if (server && shared_state->recovery != nullptr) {
      sg4::Actor::create(fmt::format("server-{}", s), engine.host_by_name(plan.switches[s].host),
                         [shared_state, s] { serve_through_rebuilds(*shared_state, static_cast<int>(s)); })
          ->daemonize();
      continue;
    }
    sg4::Actor::create(fmt::format("{}-{}", server ? "server" : "switch", s),
                       engine.host_by_name(plan.switches[s].host), [shared_state, s] {
      RunState& state = *shared_state;
      const RunPlan& plan = *state.setup.plan;
      if (plan.model.deployment.asynchronous) {
        run_async_server(state, static_cast<int>(s));
        return;
      }
      const auto group = state.membership.current_shared();
      Comm comm(*group, group->size() + static_cast<int>(s));
      for (int round = 0; round < state.setup.scenario->training.rounds; ++round) {
        comm.set_round(round);
        // shaped as the ranks' vectors (carried and logical elements), so that their views match
        Buffer data(state.setup.scenario->collective.dtype, plan.payload.carried_elems, plan.payload.logical_elems);
        if (plan.training.buckets.empty()) {
          switch_side(state.setup)(comm, data, state.setup.args);
          continue;
        }
        // the buckets as the ranks run them (sim/worker.cpp): one after the other, or with
        // training.streams = k up to k at once, each on its bucket's tag; a switch or server
        // serving only one at a time would never see the messages of the other streams' buckets
        StreamPool streams(state.setup.scenario->training.streams);
        for (size_t b = 0; b < plan.training.buckets.size(); ++b) {
          std::optional<Comm> tagged = bucket_stream_comm(streams, comm, b);
          streams.run(fmt::format("switch-{}-bucket-{}", s, b), [&state, &plan, &data, &comm, tagged, b]() mutable {
            Comm& on = tagged ? *tagged : comm;  // one stream: in this actor, as before
            Buffer bucket = data.slice(plan.training.buckets[b].offset, plan.training.buckets[b].map);
            on.set_bucket(static_cast<int>(b));
            CollectiveArgs args = state.setup.args;
            args.deployment = plan.training.deployment_of(args.deployment, b);
            switch_side(state.setup)(on, bucket, args);
            return Interval{};
          });
        }
        streams.wait_all();
      }
    });
  }
}

}  // namespace

SimResult simulate(std::shared_ptr<const RunPlan> plan) {
  // The run's shared state: workers, fault injectors and the coordinator meet here
  // (sim/run_state.hpp says how long it lives).
  const auto shared_state = std::make_shared<RunState>();
  RunState& state = *shared_state;
  set_up(state, plan);
  SimResult result;
  result.plan = plan;
  const int p = plan->workers;
  std::vector<int> everyone(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) everyone[static_cast<size_t>(r)] = r;
  if (plan->scenario.recovery.policy == RecoveryPolicy::rebuild) watch_waits(state, result);
  state.membership.start(state.new_group(0, everyone));

  const std::vector<ResolvedFault> faults = arm_faults(plan->faults);
  start_fault_injectors(state, faults);
  if (state.recovery != nullptr) state.recovery->start_coordinator();
  for (int r = 0; r < p; ++r)
    sg4::Actor::create(fmt::format("rank-{}", r), state.setup.rank_hosts[static_cast<size_t>(r)],
                       [shared_state, r] {
                         if (shared_state->setup.plan->model.deployment.asynchronous) run_async_worker(*shared_state, r);
                         else run_worker(*shared_state, r);
                       });
  start_switches(shared_state);
  LinkUsageRecorder link_usage;
  link_usage.start(std::dynamic_pointer_cast<const RouteCache>(plan->model.network), state.record.messages);
  link_usage.watch(faulty_links(faults));
  state.record.messages.set_limit(plan->kept_messages);
  sg4::Engine::get_instance()->run();
  if (state.record.failure) std::rethrow_exception(state.record.failure);
  // (a collective recorded when the run stalled: its links' peaks back as they were)
  if (state.record.messages.capturing()) state.record.messages.end_capture(sg4::Engine::get_clock());
  collect_results(state, result);
  result.replayed = state.replay->replayed();
  result.simulated = state.replay->simulated();
  result.replay_off = state.replay->why_off();
  result.link_usage = link_usage.finish(result.simulated_time);
  std::vector<int> dropped;
  for (const auto& recovery : result.recoveries)
    dropped.insert(dropped.end(), recovery.dropped_ranks.begin(), recovery.dropped_ranks.end());
  note_fault_effects(result.faults, result.link_usage, state.record.slowed_work, dropped, result.simulated_time);
  return result;
}

SimResult run_simulation(const Scenario& scenario, const PlanOptions& options) {
  SimGridGuard guard;
  const auto plan = std::make_shared<const RunPlan>(plan_run(scenario, options, guard));
  guard.simulating(fmt::format("{} on '{}'", scenario.name, scenario.topology));
  SimResult result = simulate(plan);
  if (!result.stall.empty()) guard.discard();  // collsim explains the stall itself
  return result;
}

}  // namespace collsim
