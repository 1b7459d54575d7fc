#include "sim/worker.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <cstring>
#include <stdexcept>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <fmt/format.h>

#include "recovery/detector.hpp"
#include "sim/bucket_data.hpp"
#include "sim/recovery_adapter.hpp"
#include "sim/round_replay.hpp"
#include "sim/server_shares.hpp"
#include "sim/faults.hpp"
#include "sim/guarded.hpp"
#include "sim/streams.hpp"
#include "algorithms/algorithms.hpp"
#include "training/iteration.hpp"
#include "training/noise.hpp"
#include "util/random.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

// What a worker keeps of a round so that it can run the round's collective again:
// the model before the update and the gradient that went into the collective.
struct Snapshot {
  int round = -1;
  std::vector<double> weights;
  Buffer gradient;
};

class Worker {
public:
  Worker(RunState& state, int world)
      : state_(state), setup_(state.setup), record_(state.record), membership_(state.membership),
        recovery_(state.recovery.get()), detector_(recovery_ != nullptr ? &recovery_->detector() : nullptr), world_(world), me_(state.workers[static_cast<size_t>(world)]) {}

  void run(int first_round, std::shared_ptr<CommGroup> group) {
    const Scenario& scenario = *setup_.scenario;
    Buffer buf = rank_vector(setup_);
    if (setup_.regression) me_.weights.assign(static_cast<size_t>(setup_.regression->parameters()), 0.0);
    if (setup_.plan->training.zero3) parameters_ = record_.owned_parameters;  // the model everyone starts from
    Snapshot current, previous;
    bool redo_last = false;  // sent back from waiting for the group to redo the last round's collective

    for (int round = first_round; round < scenario.training.rounds;) {
      Next next = Next::redo_collective;
      if (!std::exchange(redo_last, false)) {
        announce_round(state_, round);  // faults of this round strike before its work begins
        me_.round = round;
        record_.times(round, world_).start = sg4::Engine::get_clock();
        // A returning worker joins at the start of this round: everyone moves to the new
        // group and the joiner receives the current model. A verdict there sends the group
        // back to the round before (redone from its snapshot), or the joiner to a later round.
        next = join_switch(group, round, current, previous, buf);
      }
      if (next == Next::leave) return;
      if (next == Next::restart_round) continue;
      const double backward_end = next == Next::go_on ? compute_phase(round, *group, current, previous, buf) : -1;
      next = run_collective(group, round, current, previous, buf);
      if (next == Next::leave) return;
      if (next == Next::restart_round) continue;
      finish_round(round, *group, backward_end, buf);
      ++round;
      if (round == scenario.training.rounds && detector_ != nullptr) {
        const Next after = wait_for_the_group(group, round, current, previous, buf);
        if (after == Next::leave) return;
        redo_last = after == Next::redo_collective;
      }
    }
    // Verification looks at the last round only: keep its input and result, once.
    me_.input = std::move(current.gradient);
    me_.result = std::move(buf);
    me_.round = scenario.training.rounds;
    if (detector_ != nullptr) recovery_->retire(world_);
    me_.fate = WorkerFate::finished;
    me_.fate_time = sg4::Engine::get_clock();
  }

  // The rejoin protocol of a worker whose host came back: ask, then wait for the answer.
  void rejoin() {
    me_.fate = WorkerFate::rejoining;
    recovery_->join(world_);
    const Verdict news = recovery_->take_verdict(world_);
    if (news.dropped) {
      me_.fate = WorkerFate::dropped;
      me_.fate_time = sg4::Engine::get_clock();
      return;
    }
    me_.fate = WorkerFate::running;
    run(news.resume_round, news.group);
  }

private:
  // What a worker does after a verdict.
  enum class Next {
    go_on,            // no verdict: the round goes on
    leave,            // dropped: it leaves the run
    redo_collective,  // the new group redoes the collective of `round` from its snapshot
    restart_round,    // a joiner postponed by a rebuild: admitted again, at the start of `round`
  };

  // A round's computation (forward, backward) and its gradient, and the snapshot a rebuild
  // may roll back to; the end of backward when buckets overlap it (-1: none).
  double compute_phase(int round, const CommGroup& group, Snapshot& current, Snapshot& previous, Buffer& buf) {
    RankRound& times = record_.times(round, world_);
    double backward_end = -1;
    if (detector_ != nullptr) detector_->computing(world_, round, nominal_compute());
    if (setup_.plan->training.zero3) {
      times.collective_start = times.start;  // forward waits for its parameters from the start
    } else if (setup_.plan->training.buckets.empty()) {
      declare_round_entry(state_, world_, round);
      compute();
      times.compute_end = times.collective_start = sg4::Engine::get_clock();
    } else {
      backward_end = forward_then_start_backward(times, round, group.epoch());
    }
    if (detector_ != nullptr) detector_->idle(world_);
    if (!setup_.plan->training.zero3) make_gradient(buf);  // zero3: once forward has gathered the parameters
    // The previous round is kept only where a rebuild may roll back to it.
    if (setup_.scenario->recovery.policy == RecoveryPolicy::rebuild) previous = std::move(current);
    current = Snapshot{round, me_.weights, setup_.keep_inputs ? buf : Buffer()};
    return backward_end;
  }

  // Runs the round's collective; on a failure, reports and restarts it in the rebuilt
  // group. go_on once it completed; restart_round or leave as a verdict says (leave too for
  // a rank that lost its peer under recovery.policy "none": it stays blocked for good).
  Next run_collective(std::shared_ptr<CommGroup>& group, int& round, Snapshot& current, Snapshot& previous, Buffer& buf) {
    const Scenario& scenario = *setup_.scenario;
    for (Next next = Next::go_on; next != Next::restart_round;) {
      try {
        const int g = group->group_rank(world_);
        Comm comm(*group, g);
        comm.set_round(round);
        CollectiveArgs args = setup_.args;
        args.root = root_in_group(args.root, group->size());
        args.servers = servers_serving(args, *group);  // (server processes: those left)
        comm.set_data(buf.all());
        if (setup_.plan->training.zero3) {
          sharded_round(comm, buf, args, round, group->epoch(), record_.times(round, world_), current);
          return Next::go_on;
        }
        if (setup_.plan->training.buckets.empty()) run_round_collective(state_, world_, comm, buf, args, round);
        else reduce_buckets(comm, buf, args, round, group->epoch(), record_.times(round, world_));
        if (const auto part = reduced_part(scenario.collective.kind, buf.size(), g, group->size(), args.root))
          setup_.op->finalize(buf.view(part->offset, part->count), group->size());
        return Next::go_on;
      } catch (const VerdictPending&) {
        next = resume(group, round, current, previous, buf);
      } catch (const simgrid::Exception&) {
        if (scenario.recovery.policy == RecoveryPolicy::none) {
          // The group waits: this rank cannot go on without its peer, and it stays (ending
          // the actor would cancel its other transfers and wake its peers).
          me_.fate = WorkerFate::aborted;
          me_.fate_time = sg4::Engine::get_clock();
          sg4::Mailbox::by_name(fmt::format("stalled:{}", world_))->get<int>();
          return Next::leave;
        }
        report_failure();
        next = resume(group, round, current, previous, buf);
      }
      if (next == Next::leave) return Next::leave;
    }
    return Next::restart_round;
  }

  // The round is over for this rank: the end of backward, the update, the record.
  void finish_round(int round, const CommGroup& group, double backward_end, Buffer& buf) {
    if (backward_end >= 0) {
      // Usually over already: the last bucket waited for it.
      if (sg4::Engine::get_clock() < backward_end) sg4::this_actor::sleep_until(backward_end);
      record_.times(round, world_).compute_end = backward_end;
    }
    if (!setup_.plan->training.zero3) apply_update(buf);
    RankRound& done = record_.times(round, world_);
    done.end = sg4::Engine::get_clock();
    done.epoch = group.epoch();
    if (setup_.regression) {
      done.model_hash = hash_bytes(me_.weights.data(), me_.weights.size() * sizeof(double));
      if (group.world_rank(0) == world_) record_.round_loss[static_cast<size_t>(round)] = setup_.regression->loss(me_.weights);
    }
  }

  // After a verdict: leave, or go on in the new group from the round it resumes.
  Next resume(std::shared_ptr<CommGroup>& group, int& round, Snapshot& current, Snapshot& previous, Buffer& buf) {
    const Verdict news = recovery_->take_verdict(world_);
    if (news.dropped) {
      recovery_->retire(world_);
      me_.fate = WorkerFate::dropped;
      me_.fate_time = sg4::Engine::get_clock();
      return Next::leave;
    }
    group = news.group;
    if (news.admission) {
      // It had not received the model (or joined after the round the group went back to):
      // it has no state to resume from, and takes the model again at its new round.
      record_.times(round, world_) = RankRound{};
      round = news.resume_round;
      current = previous = Snapshot{};
      return Next::restart_round;
    }
    note_resumed(group->epoch());
    // Go back to the round the group resumes from (at most one round back; never ahead:
    // the coordinator resumes from the lowest round its survivors are in). A member caught
    // in the model's share at the start of round r has round r - 1's snapshot as its last.
    if (news.resume_round > round)
      throw std::logic_error(fmt::format("rank {} in round {} told to resume from round {}", world_, round,
                                         news.resume_round));
    round = news.resume_round;
    if (current.round != round) current = std::move(previous);
    if (current.round != round)
      throw std::logic_error(fmt::format("rank {} told to resume from round {}, of which it has no snapshot", world_,
                                         round));
    detector_->resumed(world_, round);
    me_.weights = current.weights;
    buf = current.gradient;
    RankRound& redo = record_.times(round, world_);
    redo.collective_start = sg4::Engine::get_clock();
    return Next::redo_collective;
  }

  // Done with the last round, a member stays until every live member is: a verdict may
  // still send the group back to redo it (in a tree, the ranks that got the broadcast are
  // done while the others wait on a slow rank; leaving, they would leave the redo without
  // them). The last one to get here lets everyone go; so does the coordinator's verdict.
  Next wait_for_the_group(std::shared_ptr<CommGroup>& group, int& round, Snapshot& current, Snapshot& previous,
                          Buffer& buf) {
    me_.waiting_for_the_group = sg4::Semaphore::create(0);
    let_the_group_go_if_done(state_);
    me_.waiting_for_the_group->acquire();
    me_.waiting_for_the_group = nullptr;
    if (!detector_->activity(world_).verdict) return Next::go_on;
    return resume(group, round, current, previous, buf);
  }

  // A broken transfer is certain: reported at once (unless a verdict broke it).
  void report_failure() {
    if (!detector_->activity(world_).verdict) detector_->failed(world_, state_.waits[static_cast<size_t>(world_)].peer);
  }

  // At the start of `round`: a switch to a group that a returning worker joins, and the
  // model's share. go_on, or what a verdict during the share says.
  Next join_switch(std::shared_ptr<CommGroup>& group, int& round, Snapshot& current, Snapshot& previous, Buffer& buf) {
    const Membership::Switch* joining = membership_.switch_at(round);
    const bool joiner = membership_.awaiting_model(world_);
    if (joining == nullptr || (joining->group->epoch() <= group->epoch() && !joiner)) return Next::go_on;
    // A verdict not read yet (a rebuild at the instant its round ended) comes first: the
    // share would post transfers in a group it is about to leave.
    if (detector_ != nullptr && detector_->activity(world_).verdict) return resume(group, round, current, previous, buf);
    group = joining->group;
    const int root = joining->root;  // (the switch may change while the share runs)
    try {
      share_model(*group, round, root);
    } catch (const VerdictPending&) {
      return resume(group, round, current, previous, buf);
    } catch (const simgrid::Exception&) {
      report_failure();
      return resume(group, round, current, previous, buf);
    }
    if (joiner) state_.membership.model_received(world_);
    return Next::go_on;
  }

  // At the round a worker rejoins, a member that has the model (`root_world`, the first
  // one) broadcasts its weights (binomial tree over the new group) so that the joiners start
  // from the same model.
  void share_model(CommGroup& group, int round, int root_world) {
    if (!setup_.regression) return;
    const int root = group.group_rank(root_world);
    const int g = group.group_rank(world_);
    // The weights stand for the logical model, as large as its gradient (collective.size):
    // shared as that many bytes, in whole float64 elements.
    const auto logical = static_cast<size_t>(std::ceil(setup_.plan->payload.logical_bytes / sizeof(double)));
    Buffer model(Dtype::float64, me_.weights.size(), std::max(logical, me_.weights.size()));
    if (g == root) std::memcpy(model.data(), me_.weights.data(), me_.weights.size() * sizeof(double));
    Comm comm(group, g);
    comm.set_round(round);
    comm.set_data(model.all());
    CollectiveArgs args;
    args.root = root;
    broadcast_binomial(comm, model, args);
    std::memcpy(me_.weights.data(), model.data(), me_.weights.size() * sizeof(double));
  }

  // What a round's computation should take at the host's nominal speed: with layers, the
  // forward pass (backward runs beside the stream's bucket collectives, which have deadlines
  // of their own).
  double nominal_compute() const {
    const auto& training = setup_.scenario->training;
    if (training.has_layers()) return pass_seconds(training.layers).forward;
    return training.compute + training.compute_flops / sg4::this_actor::get_host()->get_speed();
  }

  // Layered training: forward through every layer, then backward runs on the device while
  // this actor, the communication stream, reduces each bucket once backward has made it;
  // returns when backward ends (-1: no backward). Backward is a timeline (the device runs
  // nothing else), not a SimGrid execution: an execution's end depends, in its last ulps,
  // on the other actions on its host's CPU, and each of the stream's waits is one (a sleep
  // action; under `rebuild` with a deadline): its end moved by a few ulps (measured).
  double forward_then_start_backward(RankRound& times, int round, int epoch) {
    const auto [forward, backward] = pass_seconds(setup_.scenario->training.layers);
    const double speed = sg4::this_actor::get_host()->get_speed();
    const double factor = compute_factor();
    const double forward_start = sg4::Engine::get_clock();
    if (forward > 0) sg4::this_actor::execute(forward * speed / factor);
    if (speed_factor() < 1 && forward + backward > 0) record_.slowed_work[static_cast<size_t>(world_)] = 1;
    backward_start_ = sg4::Engine::get_clock();
    backward_factor_ = factor;
    times.collective_start = times.compute_end = backward_start_;
    record_layers(round, epoch, forward_start, factor);
    if (backward <= 0) return -1;
    return backward_start_ + backward / factor;
  }

  // Each layer's forward and backward as the device ran them (training/iteration.hpp).
  void record_layers(int round, int epoch, double forward_start, double factor) {
    for (const LayerInterval& layer : layer_timeline(setup_.scenario->training.layers, forward_start, backward_start_, factor))
      record({world_, round, epoch, Activity::Lane::compute, layer.forward ? "forward" : "backward", layer.layer, layer.start,
              layer.end, false});
  }

  // One collective per bucket, in backward order, each when backward has produced its last
  // gradient and a stream is free (training.streams: one, as NCCL runs them, or up to k at
  // once, sim/streams.hpp). Sharded (zero2): each bucket is reduce-scattered instead, and after
  // the optimizer's step the updated parameters are all-gathered bucket by bucket (the halves).
  void reduce_buckets(Comm& comm, Buffer& buf, const CollectiveArgs& args, int round, int epoch, RankRound& times) {
    const AlgorithmInfo& reduce = setup_.plan->training.reduce_scatter ? *setup_.plan->training.reduce_scatter : *setup_.algorithm;
    StreamPool streams(setup_.scenario->training.streams);
    for (size_t b = 0; b < setup_.plan->training.buckets.size(); ++b) {
      const double ready = backward_start_ + setup_.plan->training.buckets[b].bucket.ready / backward_factor_;
      state_.replay->declare(world_, std::max(sg4::Engine::get_clock(), ready), next_ready(b));
      if (sg4::Engine::get_clock() < ready) {
        // Backward is still making this bucket: the rank computes (since backward began,
        // which should take the bucket's nominal ready time), so that peers waiting on a
        // slow backward pass find it, as they find a slow forward pass.
        if (detector_ != nullptr) detector_->computing(world_, round, setup_.plan->training.buckets[b].bucket.ready, backward_start_);
        sg4::this_actor::sleep_until(ready);
        if (detector_ != nullptr) detector_->idle(world_);
      }
      on_stream(streams, comm, buf, args, reduce, b, round, epoch);
    }
    streams.wait_all();  // (zero2: the step needs every reduced shard)
    if (setup_.plan->training.allgather != nullptr) {
      for (size_t b = 0; b < setup_.plan->training.buckets.size(); ++b) {
        state_.replay->declare(world_, sg4::Engine::get_clock());
        on_stream(streams, comm, buf, args, *setup_.plan->training.allgather, b, round, epoch);
      }
      streams.wait_all();
    }
    times.comm = streams.busy();
    times.comm_added = streams.added_up();
  }

  // The earliest the collective after bucket b's may start: b + 1's ready time (or -inf).
  double next_ready(size_t b) const {
    const auto& buckets = setup_.plan->training.buckets;
    if (b + 1 >= buckets.size()) return -std::numeric_limits<double>::infinity();
    return backward_start_ + buckets[b + 1].bucket.ready / backward_factor_;
  }

  // Bucket b's collective on a stream: with several, on the bucket's own tag.
  void on_stream(StreamPool& streams, Comm& comm, Buffer& buf, const CollectiveArgs& args, const AlgorithmInfo& algorithm,
                 size_t b, int round, int epoch) {
    std::optional<Comm> tagged = bucket_stream_comm(streams, comm, b);
    streams.run(fmt::format("rank-{}-bucket-{}", world_, b), [this, tagged, &comm, &buf, args, &algorithm, b, round, epoch]() mutable {
      const double start = sg4::Engine::get_clock();
      run_on_bucket(tagged ? *tagged : comm, buf, args, algorithm, b, round, epoch);
      return Interval{start, sg4::Engine::get_clock()};
    });
  }

  // Runs `algorithm` on bucket b's slice of `buf` (whole variables: the bucket's own on the
  // servers) and records it on the comm lane (abandoned when a fault cuts it); returns how long it took.
  double run_on_bucket(Comm& comm, Buffer& buf, CollectiveArgs args, const AlgorithmInfo& algorithm, size_t b,
                       int round, int epoch) {
    args.deployment = bucket_deployment(setup_, args, b);
    const BucketSlice& slice = setup_.plan->training.buckets[b];
    const double start = sg4::Engine::get_clock();
    Activity interval{world_, round, epoch, Activity::Lane::comm, std::string(collective_name(algorithm.collective)),
                      static_cast<int>(b), start, start, false};
    Buffer bucket = bucket_data(state_, world_, buf, slice);
    comm.set_data(bucket.all(), slice.offset);
    me_.bucket = static_cast<int>(b);
    me_.in_flight = interval;
    comm.set_bucket(static_cast<int>(b));
    try {
      const double launch = setup_.plan->training.launch_seconds(static_cast<int>(b));
      const ReplayShape shape{&algorithm, slice.map, launch, static_cast<int64_t>(slice.offset), round, static_cast<int>(b)};
      if (const auto replayed = state_.replay->enter(world_, shape, bucket)) {
        sg4::this_actor::sleep_until(*replayed);
        interval.replayed = true;
      } else {
        comm.begin_collective();
        comm.compute(launch);
        algorithm.run(comm, bucket, args);
      }
      state_.replay->leave(world_);
    } catch (const simgrid::ForcefulKillException&) {
      throw;  // a preemption: the fault recorded the interval when it struck
    } catch (...) {
      // The bucket's collective is abandoned: the trace keeps how far it got.
      interval.end = sg4::Engine::get_clock();
      interval.abandoned = true;
      record(interval);
      me_.in_flight.abandoned = true;  // recorded: a later preemption of this rank adds nothing
      throw;
    }
    me_.bucket = -1;
    comm.set_bucket(-1);
    bucket_done(state_, world_, comm.size(), round, b, buf, std::move(bucket));
    interval.end = sg4::Engine::get_clock();
    record(interval);
    return interval.end - start;
  }

  // ZeRO-3 (training/zero3.hpp): the stream runs the plan's all-gathers of parameters and
  // reduce-scatters of gradients in order, each once the device event it waits for has
  // happened; the device's layers are timed from the ends of the ops they wait for.
  void sharded_round(Comm& comm, Buffer& gradient, const CollectiveArgs& args, int round, int epoch,
                     RankRound& times, Snapshot& current) {
    const Zero3Plan& plan = *setup_.plan->training.zero3;
    const double factor = compute_factor();
    const double t0 = sg4::Engine::get_clock();
    DeviceTimeline device(plan.tasks, factor);
    std::vector<double> op_end(plan.ops.size(), -1);
    const size_t forward_gathers = setup_.plan->training.buckets.size();
    times.comm = 0;
    for (size_t j = 0; j < plan.ops.size(); ++j) {
      const StreamOp& op = plan.ops[j];
      const double gate = op.task >= 0 ? t0 + device.at(op.task, op.gate_on_end, op_end) : 0;
      state_.replay->declare(world_, std::max(sg4::Engine::get_clock(), gate));
      if (sg4::Engine::get_clock() < gate) sg4::this_actor::sleep_until(gate);
      const auto b = static_cast<size_t>(op.bucket);
      if (op.kind == StreamOp::Kind::gather) times.comm += gather_parameters(comm, args, b, round, epoch);
      else times.comm += run_on_bucket(comm, gradient, args, *setup_.plan->training.reduce_scatter, b, round, epoch);
      op_end[j] = sg4::Engine::get_clock() - t0;
      if (j + 1 == forward_gathers) {
        // Forward has every parameter: the gradient (real, with a model) follows from them.
        if (setup_.regression)
          for (size_t i = 0; i < me_.weights.size(); ++i) me_.weights[i] = static_cast<double>(parameters_.get(i));
        make_gradient(gradient);
        current.gradient = gradient;
      }
    }
    const int last = static_cast<int>(plan.tasks.size()) - 1;
    const double device_end = t0 + device.at(last, true, op_end);
    if (sg4::Engine::get_clock() < device_end) sg4::this_actor::sleep_until(device_end);
    double compute = 0;
    for (size_t t = 0; t < plan.tasks.size(); ++t) {
      const DeviceTask& task = plan.tasks[t];
      compute += task.duration / factor;
      record({world_, round, epoch, Activity::Lane::compute, task.forward ? "forward" : "backward", task.layer,
              t0 + device.start(static_cast<int>(t)), t0 + device.end(static_cast<int>(t)), false});
    }
    // Compute on the critical path: the layers' own times (a layer waiting for its
    // parameters is exposed communication, not compute).
    times.compute_end = t0 + compute;
    update_shards(gradient, comm.rank(), comm.size());
  }

  // The carried elements of chunk `rank` of bucket b, in the bucket: what that rank owns
  // (split_evenly of the bucket's parameters, as the reduce-scatter leaves it and the
  // all-gather takes it).
  Chunk owned_part(size_t b, int rank, int size) const {
    const BucketSlice& slice = setup_.plan->training.buckets[b];
    const Chunk own = *reduced_part(Collective::reduce_scatter, slice.bucket.parameters, rank, size, 0);
    return {slice.map.at(own.offset), slice.map.at(own.offset + own.count) - slice.map.at(own.offset)};
  }

  // ZeRO-3 holds only its shard of bucket b's parameters between uses: the rest is freed,
  // then gathered from its owners; what arrives must be what the owners hold.
  double gather_parameters(Comm& comm, const CollectiveArgs& args, size_t b, int round, int epoch) {
    const BucketSlice& slice = setup_.plan->training.buckets[b];
    const Chunk own = owned_part(b, comm.rank(), comm.size());
    const size_t elem = parameters_.elem_bytes();
    std::byte* begin = parameters_.carried_view(slice.offset, slice.count, slice.bucket.parameters).data;
    std::memset(begin, 0xff, own.offset * elem);
    std::memset(begin + (own.offset + own.count) * elem, 0xff, (slice.count - own.offset - own.count) * elem);
    const double took = run_on_bucket(comm, parameters_, args, *setup_.plan->training.allgather, b, round, epoch);
    if (record_.gather_failure.empty() &&
        std::memcmp(begin, record_.owned_parameters.data() + slice.offset * elem, slice.count * elem) != 0)
      record_.gather_failure = fmt::format("rank {}, round {}: the all-gathered parameters of bucket {} differ from "
                                          "their owners'", world_, round, b);
    return took;
  }

  // After the reduce-scatters: each rank averages its own shard of every bucket's gradient,
  // takes its optimizer step on that shard of the parameters (SGD), and now owns the result.
  void update_shards(Buffer& gradient, int rank, int size) {
    const double rate = setup_.scenario->training.learning_rate;
    for (size_t b = 0; b < setup_.plan->training.buckets.size(); ++b) {
      const Chunk own = owned_part(b, rank, size);
      const size_t first = setup_.plan->training.buckets[b].offset + own.offset;
      setup_.op->finalize(gradient.carried_view(first, own.count, 0), size);
      for (size_t i = first; i < first + own.count; ++i) {
        parameters_.set(i, parameters_.get(i) - rate * gradient.get(i));
        record_.owned_parameters.set(i, parameters_.get(i));
      }
    }
  }

  void record(const Activity& activity) {
    if (world_ < max_activity_ranks) record_.activities.push_back(activity);
  }

  // Computation runs on the host's CPU; a slow-host fault stretches it by 1/factor.
  void compute() {
    const double flops = round_compute_flops(state_, world_, me_.round);  // what the replay declared
    if (flops > 0) sg4::this_actor::execute(flops);
    if (speed_factor() < 1 && flops > 0) record_.slowed_work[static_cast<size_t>(world_)] = 1;
  }

  void make_gradient(Buffer& buf) {
    if (!setup_.regression) {
      setup_.plan->input(world_, buf);
      return;
    }
    const int workers = setup_.world_size();
    setup_.regression->gradient(me_.weights, setup_.regression->partition(world_, workers), gradient_);
    for (size_t i = 0; i < gradient_.size(); ++i) buf.set(i, gradient_[i]);
  }

  void apply_update(const Buffer& averaged) {
    if (!setup_.regression) return;
    const double rate = setup_.scenario->training.learning_rate;
    for (size_t i = 0; i < me_.weights.size(); ++i) me_.weights[i] -= rate * static_cast<double>(averaged.get(i));
  }

  void note_resumed(int epoch) {
    for (auto event = record_.recoveries.rbegin(); event != record_.recoveries.rend(); ++event) {
      if (event->epoch_after != epoch || !event->rebuilds()) continue;
      const double now = sg4::Engine::get_clock();
      if (event->resumed < 0 || now < event->resumed) event->resumed = now;
      return;
    }
  }

  // The slow-host faults on this rank's host, as they stand now.
  double speed_factor() const { return state_.host_speed_factor[static_cast<size_t>(world_)]; }
  // ... and this round's compute noise (training.noise): the speed the device computes at.
  double compute_factor() const {
    return speed_factor() / compute_noise(setup_.scenario->training.noise, setup_.scenario->seed, world_, me_.round);
  }

  // What a worker sees: the setup and the membership read only, the record's rows it
  // writes, its own state and the detector's watch; the whole run state only to announce
  // its rounds (faults at a round strike then) and for the slow-host factor.
  RunState& state_;
  const RunSetup& setup_;
  RunRecord& record_;
  const Membership& membership_;
  RecoveryAdapter* recovery_;  // recovery.policy "rebuild" (else nullptr): its verdicts' post
  Detector* detector_;         // and its detector, told what the worker does outside waits
  int world_;
  WorkerState& me_;
  std::vector<double> gradient_;
  Buffer parameters_;  // zero3: this rank's copy of the parameters (only its shards between uses)
  double backward_start_ = 0, backward_factor_ = 1;
};

}  // namespace

void let_the_group_go_if_done(RunState& state) {
  const std::vector<int>& members = state.membership.current().members();
  // Server processes: a member preempted before done may owe a pull (Comm::await reports it): wait.
  const bool server_processes = state.setup.plan->model.deployment.processes && !state.setup.plan->switches.empty();
  for (int world : members) {
    const WorkerState& worker = state.workers[static_cast<size_t>(world)];
    const bool live = worker.fate == WorkerFate::running && state.setup.rank_hosts[static_cast<size_t>(world)]->is_on();
    if (live && (!worker.waiting_for_the_group || state.recovery->detector().activity(world).verdict)) return;
    if (server_processes && worker.fate == WorkerFate::preempted && !worker.waiting_for_the_group) return;
  }
  for (int world : members)
    if (const auto& waiting = state.workers[static_cast<size_t>(world)].waiting_for_the_group) waiting->release();
}

void run_worker(RunState& state, int world) {
  guarded(state, [&] { Worker(state, world).run(0, state.membership.current_shared()); });
}

void run_returning_worker(RunState& state, int world) {
  guarded(state, [&] { Worker(state, world).rejoin(); });
}

}  // namespace collsim
