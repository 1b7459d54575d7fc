#include "parallel/executor.hpp"

#include <algorithm>
#include <exception>
#include <fmt/format.h>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include "comm/comm_group.hpp"
#include "parallel/group_switches.hpp"
#include "plan/input_data.hpp"
#include "plan/model_plan.hpp"
#include "plan/simgrid_guard.hpp"
#include "parallel/step_executor.hpp"
#include "sim/streams.hpp"
#include "util/units.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

double ParallelOutcome::communicator_time(int communicator) const {
  double start = std::numeric_limits<double>::infinity(), end = 0;
  for (const GroupOutcome& g : groups)
    if (g.communicator == communicator) {
      start = std::min(start, g.start);
      end = std::max(end, g.end);
    }
  return end > start ? end - start : 0;
}

namespace {

// One rank's part in one group's collective.
struct Task {
  int communicator = 0, group = 0, group_rank = 0;
};

// What the rank actors share for the run (held by their closures).
struct ParallelState {
  std::shared_ptr<const RunPlan> plan;
  std::vector<CommunicatorPlan> communicators;
  MessageLog log;
  std::vector<std::unique_ptr<ReduceOp>> ops;                         // [communicator]
  std::vector<std::vector<std::shared_ptr<CommGroup>>> groups;        // [communicator][group]
  std::vector<std::vector<std::vector<std::string>>> switch_hosts;   // [communicator][group]: its switches' hosts
  std::vector<std::vector<std::vector<Buffer>>> results;              // [communicator][group][group rank]
  std::vector<std::vector<std::vector<Interval>>> times;              // likewise; end < 0: never ended
  std::vector<std::vector<Task>> tasks;                               // by world rank
  std::exception_ptr failure;                                         // the first error inside an actor (a bug)
};

std::shared_ptr<CommGroup> make_group(ParallelState& state, const std::vector<int>& members, const CommunicatorPlan& c) {
  auto group = std::make_shared<CommGroup>(0, members, state.log);
  std::vector<int> localities;
  for (int world : members) localities.push_back(state.plan->locality.ids[static_cast<size_t>(world)]);
  group->set_localities(std::move(localities));
  group->set_overhead(state.plan->model.overhead);
  group->set_message_cost(c.how.cost);
  return group;
}

// The groups, buffers and tasks of every communicator, before the engine runs; the switches of
// the groups whose algorithm reduces in them (NVLS, CollNet: parallel/group_switches.hpp).
void set_up(ParallelState& state) {
  state.tasks.assign(static_cast<size_t>(state.plan->workers), {});
  const RunSwitches switches = run_switches(*state.plan);
  for (const CommunicatorPlan& c : state.communicators) {
    state.ops.push_back(std::make_unique<ReduceOp>(c.spec.op, c.spec.dtype));
    auto& groups = state.groups.emplace_back();
    auto& results = state.results.emplace_back();
    auto& times = state.times.emplace_back();
    auto& hosts = state.switch_hosts.emplace_back(c.groups.size());
    for (size_t g = 0; g < c.groups.size(); ++g) {
      groups.push_back(make_group(state, c.groups[g], c));
      if (c.algorithm->switch_run != nullptr) {
        GroupSwitches ports = group_switches(switches, *nccl::algo_of(c.algorithm->name), c.groups[g], state.plan->locality.ids,
                                             fmt::format("parallelism.collectives.{}.algorithm", c.index));
        groups.back()->set_switches(std::move(ports.ports));
        hosts[g] = std::move(ports.hosts);
      }
      results.emplace_back(c.groups[g].size());
      times.emplace_back(c.groups[g].size(), Interval{0, -1});
      for (size_t r = 0; r < c.groups[g].size(); ++r)
        state.tasks[static_cast<size_t>(c.groups[g][r])].push_back({c.index, static_cast<int>(g), static_cast<int>(r)});
    }
  }
}

uint64_t input_seed(const RunPlan& plan, int communicator) { return plan.scenario.seed + static_cast<uint64_t>(communicator); }

CollectiveArgs args_of(const ParallelState& state, const CommunicatorPlan& c) {
  CollectiveArgs args;
  args.op = state.ops[static_cast<size_t>(c.index)].get();
  args.root = c.spec.root;
  args.segment_elems = c.how.segment_elems > 0 ? c.how.segment_elems : segment_elements(CollectiveSpec{}.segment, c.spec.dtype);
  args.channels = c.channels;
  args.fifo = c.how.fifo;
  args.hop_inside = c.how.hop_inside;
  args.hop_across = c.how.hop_across;
  return args;
}

// Runs one rank's part of one group's collective on its own tag; keeps its result.
Interval run_task(ParallelState& state, const Task& task, int world) {
  const CommunicatorPlan& c = state.communicators[static_cast<size_t>(task.communicator)];
  CommGroup& group = *state.groups[static_cast<size_t>(task.communicator)][static_cast<size_t>(task.group)];
  Comm comm(group, task.group_rank, task.communicator + 1);
  Buffer buf(c.spec.dtype, c.payload.carried_elems, c.payload.logical_elems);
  fill_input(buf, world, c.spec.op, input_seed(*state.plan, c.index));
  comm.set_data(buf.all());
  const CollectiveArgs args = args_of(state, c);
  const double start = sg4::Engine::get_clock();
  if (c.how.launch > 0) sg4::this_actor::sleep_for(c.how.launch);  // the kernel's launch, for its own vector
  c.algorithm->run(comm, buf, args);
  if (const auto part = reduced_part(c.spec.kind, buf.size(), task.group_rank, group.size(), args.root))
    args.op->finalize(buf.view(part->offset, part->count), group.size());
  const Interval ran{start, sg4::Engine::get_clock()};
  state.results[static_cast<size_t>(task.communicator)][static_cast<size_t>(task.group)][static_cast<size_t>(task.group_rank)] = std::move(buf);
  state.times[static_cast<size_t>(task.communicator)][static_cast<size_t>(task.group)][static_cast<size_t>(task.group_rank)] = ran;
  return ran;
}

// A world rank: every collective it takes part in, started at once, each on a stream.
void run_rank(const std::shared_ptr<ParallelState>& shared, int world) {
  try {
    const std::vector<Task>& tasks = shared->tasks[static_cast<size_t>(world)];
    StreamPool streams(std::max<int>(1, static_cast<int>(tasks.size())));
    for (const Task& task : tasks)
      streams.run(fmt::format("rank-{}-c{}", world, task.communicator), [shared, task, world] { return run_task(*shared, task, world); });
    streams.wait_all();
  } catch (const simgrid::ForcefulKillException&) {
    throw;
  } catch (...) {
    if (!shared->failure) shared->failure = std::current_exception();
  }
}

// Each group's results checked against its inputs (sim/verify.hpp); the times collected.
void collect(ParallelState& state, ParallelOutcome& outcome) {
  for (const CommunicatorPlan& c : state.communicators)
    for (size_t g = 0; g < c.groups.size(); ++g) {
      const auto& times = state.times[static_cast<size_t>(c.index)][g];
      GroupOutcome one{c.index, static_cast<int>(g), std::numeric_limits<double>::infinity(), 0, {}};
      bool ended = true;
      for (const Interval& t : times) {
        one.start = std::min(one.start, t.start);
        one.end = std::max(one.end, t.end);
        ended = ended && t.end >= 0;
      }
      if (!ended) {
        if (outcome.stall.empty())
          outcome.stall = fmt::format("the {} {} of group {} never completed", c.spec.communicator(), collective_name(c.spec.kind), g);
        one.verification.verified = false;
        one.verification.failure = "it did not complete";
      } else {
        const std::vector<int>& members = c.groups[g];
        one.verification = verify_results(c.spec.kind, c.spec.op, c.spec.root, state.results[static_cast<size_t>(c.index)][g],
                                          [&](int rank, Buffer& buf) {
                                            fill_input(buf, members[static_cast<size_t>(rank)], c.spec.op, input_seed(*state.plan, c.index));
                                          });
      }
      Verification& all = outcome.verification;
      all.max_error = std::max(all.max_error, one.verification.max_error);
      all.checked_ranks += one.verification.checked_ranks;
      all.wrong_elements += one.verification.wrong_elements;
      all.bitwise_identical = all.bitwise_identical && one.verification.bitwise_identical;
      if (!one.verification.verified && all.verified) {
        all.verified = false;
        all.failure = fmt::format("{} group {}: {}", c.spec.communicator(), g, one.verification.failure);
      }
      outcome.step_time = std::max(outcome.step_time, one.end);
      outcome.groups.push_back(std::move(one));
    }
}

// parallelism.step: the transformer's step (parallel/step_executor.hpp), its figures.
ParallelOutcome run_step(const std::shared_ptr<const RunPlan>& plan, SimGridGuard& guard) {
  auto step = std::make_shared<const StepPlan>(plan_step(*plan));
  guard.simulating(fmt::format("{} on '{}'", plan->scenario.name, plan->scenario.topology));
  ParallelOutcome outcome;
  outcome.plan = plan;
  outcome.step = simulate_step(plan, step);
  if (!outcome.step->stall.empty()) guard.discard();
  outcome.stall = outcome.step->stall;
  outcome.verification = outcome.step->verification;
  outcome.step_time = outcome.step->step_time;
  outcome.figures = step_figures(*outcome.step, plan->scenario.parallelism.step, plan->workers);
  return outcome;
}

}  // namespace

ParallelOutcome run_parallel(const Scenario& scenario, const PlanOptions& options) {
  SimGridGuard guard;
  auto shared = std::make_shared<ParallelState>();
  shared->plan = std::make_shared<const RunPlan>(plan_run(scenario, options, guard));
  if (scenario.parallelism.step.given) return run_step(shared->plan, guard);
  shared->communicators = plan_communicators(*shared->plan);
  set_up(*shared);
  shared->log.set_limit(shared->plan->kept_messages);
  guard.simulating(fmt::format("{} on '{}'", scenario.name, scenario.topology));
  const auto& hosts = shared->plan->rank_hosts;
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  for (int world = 0; world < shared->plan->workers; ++world)
    sg4::Actor::create(fmt::format("rank-{}", world), engine.host_by_name(hosts[static_cast<size_t>(world)]),
                       [shared, world] { run_rank(shared, world); });
  for (const CommunicatorPlan& c : shared->communicators)
    for (size_t g = 0; g < c.groups.size() && c.algorithm->switch_run != nullptr; ++g)
      start_switch_sides(shared->groups[static_cast<size_t>(c.index)][g], shared->switch_hosts[static_cast<size_t>(c.index)][g],
                         c.index + 1, c.algorithm->switch_run, c.spec.dtype, c.payload.carried_elems,
                         c.payload.logical_elems, args_of(*shared, c), shared->failure);
  sg4::Engine::get_instance()->run();
  if (shared->failure) std::rethrow_exception(shared->failure);
  ParallelOutcome outcome;
  outcome.plan = shared->plan;
  collect(*shared, outcome);
  if (!outcome.stall.empty()) guard.discard();
  outcome.communicators = shared->communicators;
  outcome.messages = std::move(shared->log);
  return outcome;
}

std::string format_parallel_summary(const ParallelOutcome& outcome) {
  if (outcome.step) return format_step_summary(*outcome.step, outcome.figures, *outcome.plan);
  const ParallelismSpec& layout = outcome.plan->scenario.parallelism;
  std::string text = fmt::format("parallelism: tensor {} x pipeline {} x data {} = {} workers (expert groups of {}), "
                                 "Megatron's rank order (tensor fastest, then data, then pipeline)\n",
                                 layout.tensor, layout.pipeline, layout.data, layout.workers(), layout.expert);
  text += fmt::format("step time: {} ({} collectives in {} groups at once, {} messages)\n", format_time(outcome.step_time),
                      outcome.communicators.size(), outcome.groups.size(), outcome.messages.count());
  for (const CommunicatorPlan& c : outcome.communicators)
    text += fmt::format("  {:<8} {} {} of {}: {} group(s) of {}, {} (alone, by the model: {}; {})\n", c.spec.communicator(),
                        collective_name(c.spec.kind), c.algorithm->name, format_size(c.spec.size), c.groups.size(),
                        c.groups.front().size(), format_time(outcome.communicator_time(c.index)), format_time(c.model_time), c.reason);
  const Verification& v = outcome.verification;
  text += v.verified ? fmt::format("verified: every group's result, {} ranks checked, max error {:.3g}\n", v.checked_ranks, v.max_error)
                     : fmt::format("verification FAILED: {}\n", v.failure);
  return text;
}

}  // namespace collsim
