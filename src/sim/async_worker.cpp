// A worker of asynchronous and bounded-staleness parameter servers (sim/async_servers.hpp):
// no allreduce per iteration. It computes on the model it last pulled; with buckets
// (training.bucket, fusion) it pushes each bucket as backward makes it, then pulls that
// bucket back, on its communication stream (training.streams: up to k buckets at once);
// without, the whole gradient once computed. With local aggregation a node's first rank
// adds up its node's gradients of the bucket before pushing, and hands the pulled bucket
// back to them: synchronous inside the node, asynchronous between nodes.
#include <fmt/format.h>
#include <optional>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "comm/comm.hpp"
#include "sim/async_layout.hpp"
#include "sim/async_servers.hpp"
#include "sim/faults.hpp"
#include "sim/guarded.hpp"
#include "sim/streams.hpp"
#include "training/iteration.hpp"
#include "training/noise.hpp"
#include "util/random.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

// One iteration's push of every shard of a bucket to its server, then the pull of each back.
void push_and_pull(Comm& comm, Buffer& bucket, const std::vector<Chunk>& shards) {
  const int p = comm.size();
  comm.label("push", 0);
  std::vector<Request> transfers;
  for (size_t s = 0; s < shards.size(); ++s)
    transfers.push_back(comm.isend(p + static_cast<int>(s), bucket.view(shards[s].offset, shards[s].count)));
  comm.wait_all(transfers);
  transfers.clear();
  comm.label("pull", 0);
  for (size_t s = 0; s < shards.size(); ++s)
    transfers.push_back(comm.irecv(p + static_cast<int>(s), bucket.view(shards[s].offset, shards[s].count)));
  comm.wait_all(transfers);
}

class AsyncWorker {
public:
  AsyncWorker(RunState& state, int world)
      : state_(state), setup_(state.setup), plan_(*setup_.plan), layout_(async_layout(plan_)), world_(world),
        me_(state.workers[static_cast<size_t>(world)]),
        node_(layout_.nodes[static_cast<size_t>(layout_.node_of[static_cast<size_t>(world)])]) {}

  void run() {
    Buffer buf(setup_.scenario->collective.dtype, plan_.payload.carried_elems, plan_.payload.logical_elems);
    if (setup_.regression) me_.weights.assign(static_cast<size_t>(setup_.regression->parameters()), 0.0);
    const auto group = state_.membership.current_shared();
    for (int round = 0; round < setup_.scenario->training.rounds; ++round) {
      announce_round(state_, round);
      me_.round = round;
      RankRound& times = state_.record.times(round, world_);
      times.start = sg4::Engine::get_clock();
      const double backward_end = compute(round, times);
      make_gradient(buf);
      me_.input = buf;
      Comm comm(*group, world_);
      comm.set_round(round);
      exchange_buckets(comm, buf, round, times);
      if (backward_end >= 0) {
        if (sg4::Engine::get_clock() < backward_end) sg4::this_actor::sleep_until(backward_end);
        times.compute_end = backward_end;
      }
      for (size_t i = 0; i < me_.weights.size(); ++i) me_.weights[i] = static_cast<double>(buf.get(i));
      times.end = sg4::Engine::get_clock();
      times.epoch = group->epoch();
      if (setup_.regression) {
        times.model_hash = hash_bytes(me_.weights.data(), me_.weights.size() * sizeof(double));
        if (world_ == 0) state_.record.round_loss[static_cast<size_t>(round)] = setup_.regression->loss(me_.weights);
      }
    }
    me_.result = std::move(buf);
    me_.round = setup_.scenario->training.rounds;
    me_.fate = WorkerFate::finished;
    me_.fate_time = sg4::Engine::get_clock();
  }

private:
  // The speed the device computes at this round: a slow host's factor over the compute noise.
  double factor(int round) const {
    return state_.host_speed_factor[static_cast<size_t>(world_)] /
           compute_noise(setup_.scenario->training.noise, setup_.scenario->seed, world_, round);
  }

  // The iteration's computation. Without buckets all of it, before the push; with buckets
  // forward, then backward as a timeline beside the stream (as sim/worker.cpp runs it):
  // returns the end of backward (-1: no buckets).
  double compute(int round, RankRound& times) {
    const TrainingSpec& training = setup_.scenario->training;
    const double speed = sg4::this_actor::get_host()->get_speed(), f = factor(round);
    if (state_.host_speed_factor[static_cast<size_t>(world_)] < 1) state_.record.slowed_work[static_cast<size_t>(world_)] = 1;
    if (!layout_.bucketed) {
      double seconds = training.compute;
      if (training.has_layers()) {
        const PassSeconds pass = pass_seconds(training.layers);
        seconds = pass.forward + pass.backward;
      }
      const double flops = training.compute_flops + seconds * speed;
      if (flops > 0) sg4::this_actor::execute(flops / f);
      times.compute_end = times.collective_start = sg4::Engine::get_clock();
      return -1;
    }
    const auto [forward, backward] = pass_seconds(training.layers);
    const double forward_start = sg4::Engine::get_clock();
    if (forward > 0) sg4::this_actor::execute(forward * speed / f);
    backward_start_ = times.collective_start = times.compute_end = sg4::Engine::get_clock();
    backward_factor_ = f;
    for (const LayerInterval& layer : layer_timeline(training.layers, forward_start, backward_start_, f))
      record({world_, round, 0, Activity::Lane::compute, layer.forward ? "forward" : "backward", layer.layer,
              layer.start, layer.end, false});
    return backward_start_ + backward / f;
  }

  void make_gradient(Buffer& buf) const {
    if (!setup_.regression) {
      plan_.input(world_, buf);
      return;
    }
    std::vector<double> gradient;
    setup_.regression->gradient(me_.weights, setup_.regression->partition(world_, setup_.world_size()), gradient);
    for (size_t i = 0; i < gradient.size(); ++i) buf.set(i, gradient[i]);
  }

  // Every bucket in backward order, each once backward has made it and a stream is free.
  void exchange_buckets(Comm& comm, Buffer& buf, int round, RankRound& times) {
    StreamPool streams(setup_.scenario->training.streams);
    for (size_t b = 0; b < layout_.buckets.size(); ++b) {
      if (layout_.bucketed) {
        const double ready = backward_start_ + plan_.training.buckets[b].bucket.ready / backward_factor_;
        if (sg4::Engine::get_clock() < ready) sg4::this_actor::sleep_until(ready);
      }
      // each bucket on mailboxes of its own: the servers take its pushes apart from the others'
      std::optional<Comm> tagged;
      if (layout_.bucketed) tagged = bucket_comm(comm, b);
      streams.run(fmt::format("rank-{}-bucket-{}", world_, b), [this, tagged, &comm, &buf, b, round]() mutable {
        return exchange(tagged ? *tagged : comm, buf, b, round);
      });
    }
    streams.wait_all();
    if (!layout_.bucketed) return;
    times.comm = streams.busy();
    times.comm_added = streams.added_up();
  }

  // One bucket: (the node's gradients added up in its first rank,) pushed and pulled back
  // (and handed to the node).
  Interval exchange(Comm& comm, Buffer& buf, size_t b, int round) {
    const AsyncBucket& bucket = layout_.buckets[b];
    const double start = sg4::Engine::get_clock();
    Buffer part = buf.slice(bucket.offset, bucket.map);
    comm.set_data(part.all(), bucket.offset);
    if (layout_.bucketed) comm.set_bucket(static_cast<int>(b));
    comm.begin_collective();
    comm.compute(plan_.training.launch_seconds(layout_.bucketed ? static_cast<int>(b) : -1));
    if (node_.front() != world_) {
      comm.label("node-reduce", 0);
      comm.send(node_.front(), part.all());
      comm.label("node-broadcast", 0);
      comm.recv(node_.front(), part.all());
    } else {
      add_up_node(comm, part);
      push_and_pull(comm, part, bucket.shards);
      comm.label("node-broadcast", 0);
      std::vector<Request> sends;
      for (size_t i = 1; i < node_.size(); ++i) sends.push_back(comm.isend(node_[i], part.all()));
      comm.wait_all(sends);
    }
    copy_elements(buf.carried_view(bucket.offset, bucket.map.carried, bucket.map.logical), part.all());
    const double end = sg4::Engine::get_clock();
    if (layout_.bucketed)
      record({world_, round, 0, Activity::Lane::comm, "allreduce", static_cast<int>(b), start, end, false});
    return {start, end};
  }

  // The node's first rank receives its node's copies of the bucket and adds them to its own,
  // in rank order (what the replay adds up).
  void add_up_node(Comm& comm, Buffer& part) {
    if (node_.size() < 2) return;
    comm.label("node-reduce", 0);
    std::vector<Buffer> received(node_.size());
    std::vector<Request> receives;
    for (size_t i = 1; i < node_.size(); ++i) {
      received[i] = part.scratch(part.size());
      receives.push_back(comm.irecv(node_[i], received[i].holding(part.all())));
    }
    comm.wait_all(receives);
    for (size_t i = 1; i < node_.size(); ++i) setup_.op->combine(part.all(), received[i].holding(part.all()));
  }

  void record(const Activity& activity) {
    if (world_ < max_activity_ranks) state_.record.activities.push_back(activity);
  }

  RunState& state_;
  const RunSetup& setup_;
  const RunPlan& plan_;
  const AsyncLayout layout_;
  int world_;
  WorkerState& me_;
  const std::vector<int>& node_;  // its node's ranks (local aggregation; else itself alone), the pusher first
  double backward_start_ = 0, backward_factor_ = 1;
};

}  // namespace

void run_async_worker(RunState& state, int world) {
  guarded(state, [&] {
    try {
      AsyncWorker(state, world).run();
    } catch (const simgrid::Exception&) {
      // A failed transfer (a fault, recovery.policy "none"): this worker cannot go on, and
      // stays, so that the run reports the stall.
      WorkerState& me = state.workers[static_cast<size_t>(world)];
      me.fate = WorkerFate::aborted;
      me.fate_time = sg4::Engine::get_clock();
      sg4::Mailbox::by_name(fmt::format("stalled:{}", world))->get<int>();
    }
  });
}

}  // namespace collsim
