// A lost worker in a training step (docs/parallelism.md#a-lost-worker-recovery-on-the-data-parallel-dimension).
// Under recovery.policy "rebuild", as a data-parallel run recovers: the lost worker's whole
// model-parallel replica (every rank of its data index: its tensor x pipeline block) leaves,
// since its tensor and pipeline peers cannot go on without it; the other replicas keep what
// they computed (their compute streams never talk to another replica) and their data-parallel
// groups are rebuilt from the survivors, in a new epoch (mailboxes of their own), where each
// redoes its buckets from bucket 0 as backward makes them: the gradients are kept, the
// reductions in flight are not. Under "none" the fault only strikes, and the step stalls.
#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "parallel/layout.hpp"
#include "parallel/step_state.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

namespace {

// The fault itself: the host goes down (its actors die with it) or the links do.
void knock_out(const PlannedFault& fault) {
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  if (fault.spec.kind == FaultKind::preempt) engine.host_by_name(fault.host)->turn_off();
  else
    for (const std::string& name : fault.links) engine.link_by_name(name)->turn_off();
}

// A link-down with a duration: the links come back (the replica stays out of this step).
void restore_after(const PlannedFault& fault) {
  if (fault.spec.kind != FaultKind::link_down || !fault.spec.duration) return;
  sg4::this_actor::sleep_for(*fault.spec.duration);
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  for (const std::string& name : fault.links) engine.link_by_name(name)->turn_on();
}

// The streams recovery stops. Each is first taken off the rank (so that one woken by its
// transfer failing as another stops knows it was stopped, parallel/step_executor.cpp's
// stream_guarded), then killed, unless it has ended already (returned, or stopped on its own).
class Stopping {
public:
  void take(sg4::ActorPtr& actor, bool ended) {
    if (actor && !ended) actors_.push_back(actor);
    actor = nullptr;
  }
  void kill_all() {
    for (const sg4::ActorPtr& actor : actors_)
      if (sg4::Actor::by_pid(actor->get_pid()) != nullptr) actor->kill();
    actors_.clear();
  }

private:
  std::vector<sg4::ActorPtr> actors_;
};

// The data indices of the replicas `fault` takes out now (not out already, and not already
// done with their step: a fault after a replica's step changes nothing of it). With expert
// parallelism a replica's mixture-of-experts layers run alltoalls with the other replicas of
// its expert group (E consecutive data indices, Megatron's order), which cannot go on
// without it: the whole expert group leaves.
std::vector<int> replicas_lost(const StepState& state, const PlannedFault& fault) {
  const ParallelismSpec& p = state.plan->scenario.parallelism;
  std::vector<int> lost;
  for (int rank : fault.ranks) {
    const int first = coordinates_of(p, rank).data / p.expert * p.expert;
    for (int d = first; d < first + p.expert; ++d)
      if (!state.lost_replica[static_cast<size_t>(d)] && std::find(lost.begin(), lost.end(), d) == lost.end())
        lost.push_back(d);
  }
  std::erase_if(lost, [&](int d) {
    for (int world = 0; world < state.plan->workers; ++world)
      if (coordinates_of(p, world).data == d && !(state.compute_done[static_cast<size_t>(world)] &&
                                                  state.data_done[static_cast<size_t>(world)]))
        return false;
    return true;
  });
  std::sort(lost.begin(), lost.end());
  return lost;
}

// Takes every rank of the lost replicas out: their streams stop, their collectives in
// flight are abandoned.
void drop_replicas(StepState& state, const std::vector<int>& lost, StepRecovery& recovery, Stopping& stopping) {
  const ParallelismSpec& p = state.plan->scenario.parallelism;
  std::vector<char> gone(static_cast<size_t>(state.plan->workers), 0);
  for (int world = 0; world < state.plan->workers; ++world) {
    const auto w = static_cast<size_t>(world);
    if (std::find(lost.begin(), lost.end(), coordinates_of(p, world).data) == lost.end()) continue;
    gone[w] = 1;
    recovery.dropped_ranks.push_back(world);
    recovery.dropped_hosts.push_back(state.plan->rank_hosts[w]);
    state.times[w].dropped = true;
    stopping.take(state.compute_actors[w], state.compute_done[w] != 0);
    stopping.take(state.data_actors[w], state.data_done[w] != 0);
  }
  for (int d : lost) state.lost_replica[static_cast<size_t>(d)] = 1;
  state.verifier.abandon(gone);
}

// The expert-data groups inside rebuilt data groups: a data group's ranks (one tensor index,
// one stage) of one expert index (data index mod expert), in data order; one group per data
// group without experts (it reduces nothing: StepPlan has no expert_data_reduce then).
std::vector<std::vector<int>> expert_data_of(const StepState& state, const std::vector<std::vector<int>>& data_groups) {
  const ParallelismSpec& p = state.plan->scenario.parallelism;
  std::vector<std::vector<int>> groups;
  for (const std::vector<int>& data : data_groups)
    for (int e = 0; e < p.expert; ++e) {
      std::vector<int> members;
      for (int world : data)
        if (coordinates_of(p, world).data % p.expert == e) members.push_back(world);
      if (!members.empty()) groups.push_back(std::move(members));
    }
  return groups;
}

// The data-parallel groups of the epoch that failed, rebuilt from their survivors: those
// with a member not done reducing redo their buckets; a group done before the fault is kept.
// Their new data streams start once the old ones are stopped (lose_workers).
void rebuild_data_groups(StepState& state, Communicator failed, StepRecovery& recovery, Stopping& stopping) {
  std::vector<std::vector<int>> redo;
  for (const std::vector<int>& old : state.members[failed]) {
    if (std::all_of(old.begin(), old.end(), [&](int w) { return state.data_done[static_cast<size_t>(w)] != 0; })) continue;
    std::vector<int> survivors;
    for (int w : old)
      if (!state.times[static_cast<size_t>(w)].dropped) survivors.push_back(w);
    if (!survivors.empty()) redo.push_back(std::move(survivors));
  }
  // each bucket size's collectives chosen again for the rebuilt groups' size (all alike)
  const StepPlan& step = *state.step;
  const std::vector<std::vector<int>> expert = expert_data_of(state, redo);
  state.rebuilt_choices.clear();
  for (const DataChoice& original : step.data_choices)
    state.rebuilt_choices.push_back(redo.empty() ? original : rechoose_data(*state.plan, original, redo.front()));
  state.rebuilt_expert_data_reduce =
      expert.empty() || step.expert_gradient_bytes.empty()
          ? step.expert_data_reduce
          : rechoose_expert_data(*state.plan, step.expert_data_reduce, step.expert_gradient_bytes.front(), expert.front());
  make_groups(state, rebuilt_data_comm, redo, state.epoch);
  make_groups(state, rebuilt_expert_data_comm, expert, state.epoch);
  for (const std::vector<int>& group : redo)
    for (int world : group) {
      const auto w = static_cast<size_t>(world);
      stopping.take(state.data_actors[w], state.data_done[w] != 0);
      state.data_done[w] = 0;
      state.times[w].end = 0;
      state.sequence[w][rebuilt_data_comm] = 0;
      state.sequence[w][rebuilt_expert_data_comm] = 0;
      state.retired.push_back(state.bucket_ready[w]);
      state.bucket_ready[w] = sg4::Semaphore::create(static_cast<unsigned>(state.buckets_made[w]));
    }
  recovery.data_groups = std::move(redo);
  recovery.data_choices = state.rebuilt_choices;
}

std::string lost_what(const PlannedFault& fault) {
  return fmt::format("{} {}", fault.target, fault.spec.kind == FaultKind::preempt ? "preempted" : "down");
}

// No replica left (or fewer workers than recovery.min_workers): the step stops here.
void stop(StepState& state, StepRecovery& recovery, size_t survivors, Stopping& stopping) {
  recovery.stopped = true;
  recovery.reason = fmt::format("stopped: {} rank(s) would be left, below recovery.min_workers {} (or none)", survivors,
                                state.plan->scenario.recovery.min_workers);
  state.stopped = recovery.reason;
  for (int world = 0; world < state.plan->workers; ++world) {
    const auto w = static_cast<size_t>(world);
    stopping.take(state.compute_actors[w], state.compute_done[w] != 0);
    stopping.take(state.data_actors[w], state.data_done[w] != 0);
  }
}

}  // namespace

void lose_workers(const std::shared_ptr<StepState>& shared, const PlannedFault& fault) {
  StepState& state = *shared;
  const std::vector<int> lost = state.plan->scenario.recovery.policy == RecoveryPolicy::rebuild
                                    ? replicas_lost(state, fault)
                                    : std::vector<int>{};
  if (lost.empty()) {
    knock_out(fault);
    return restore_after(fault);
  }
  const double now = sg4::Engine::get_clock();
  StepRecovery recovery;
  recovery.epoch_before = state.epoch;
  recovery.epoch_after = ++state.epoch;
  // the coordinator hears of a dead or cut-off worker at once (its heartbeat; docs say what
  // this leaves out), decides, and the survivors resume in the same instant
  recovery.fault_time = recovery.detected = recovery.rebuilt = recovery.resumed = now;
  recovery.rule = "dead or cut off from the coordinator";
  const Communicator failed = recovery.epoch_before == 0 ? data_comm : rebuilt_data_comm;
  Stopping stopping;
  drop_replicas(state, lost, recovery, stopping);

  for (int world = 0; world < state.plan->workers; ++world)
    if (!state.times[static_cast<size_t>(world)].dropped) recovery.group.push_back(world);
  if (recovery.group.empty() ||
      static_cast<int>(recovery.group.size()) < state.plan->scenario.recovery.min_workers) {
    stop(state, recovery, recovery.group.size(), stopping);
  } else {
    rebuild_data_groups(state, failed, recovery, stopping);
    const std::string who = lost.size() == 1
                                ? fmt::format("the replica of data index {} (its tensor x pipeline ranks {})", lost.front(),
                                              fmt::join(recovery.dropped_ranks, ", "))
                                : fmt::format("the replicas of data indices {} (an expert group: ranks {})",
                                              fmt::join(lost, ", "), fmt::join(recovery.dropped_ranks, ", "));
    recovery.reason = fmt::format("{}: {} {}; {} data-parallel group(s) rebuilt from the other replicas redo their "
                                  "buckets",
                                  lost_what(fault), who, lost.size() == 1 ? "leaves" : "leave", recovery.data_groups.size());
  }
  // The new data streams start before the old ones are killed: SimGrid ends the run (and
  // this daemon) as soon as no other actor is left, which the last kill would otherwise be.
  for (const std::vector<int>& group : recovery.data_groups)
    for (int world : group) start_data_stream(shared, world, rebuilt_data_comm);
  state.recoveries.push_back(std::move(recovery));
  knock_out(fault);
  stopping.kill_all();
  restore_after(fault);
}

}  // namespace collsim
