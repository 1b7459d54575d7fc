#include "sim/async_servers.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "algorithms/chunks.hpp"
#include "comm/comm.hpp"
#include "sim/faults.hpp"
#include "sim/guarded.hpp"
#include "training/iteration.hpp"
#include "training/noise.hpp"
#include "util/random.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

// Shard s of the vector lives on server s, as the synchronous algorithm splits it.
std::vector<Chunk> server_shards(const RunSetup& setup) {
  return split_evenly(setup.plan->payload.logical_elems, setup.plan->model.servers);
}

// What a server's CPU spends on `messages` messages of `bytes` each (0: replies), written as
// the synchronous algorithm writes it, so that staleness 0 gives its times to the last digit.
double server_cpu(const ServerDeployment& deployment, size_t messages, double bytes) {
  return static_cast<double>(messages) * (deployment.cpu_per_message + bytes * deployment.cpu_per_byte);
}

// The carried elements of a view of `whole`: [first, first + count).
size_t first_carried(const Buffer& whole, const View& part) {
  return static_cast<size_t>(part.data - whole.data()) / whole.elem_bytes();
}

// A worker's iteration: its computation (forward and backward, or `compute`), stretched by
// a slow host and this round's compute noise.
void compute_iteration(const RunState& state, int world, int round) {
  const Scenario& scenario = *state.setup.scenario;
  const TrainingSpec& training = scenario.training;
  const double speed = sg4::this_actor::get_host()->get_speed();
  const double factor = state.host_speed_factor[static_cast<size_t>(world)] /
                        compute_noise(training.noise, scenario.seed, world, round);
  double seconds = training.compute;
  if (training.has_layers()) {
    const PassSeconds pass = pass_seconds(training.layers);
    seconds = pass.forward + pass.backward;
  }
  const double flops = training.compute_flops + seconds * speed;
  if (flops > 0) sg4::this_actor::execute(flops / factor);
}

void make_gradient(const RunState& state, int world, WorkerState& me, Buffer& buf) {
  const RunSetup& setup = state.setup;
  if (!setup.regression) {
    setup.plan->input(world, buf);
    return;
  }
  std::vector<double> gradient;
  setup.regression->gradient(me.weights, setup.regression->partition(world, setup.world_size()), gradient);
  for (size_t i = 0; i < gradient.size(); ++i) buf.set(i, gradient[i]);
}

// One iteration's push of every shard to its server, then the pull of every shard back.
void push_and_pull(Comm& comm, Buffer& buf, const std::vector<Chunk>& shards) {
  const int p = comm.size();
  comm.label("push", 0);
  std::vector<Request> transfers;
  for (size_t s = 0; s < shards.size(); ++s)
    transfers.push_back(comm.isend(p + static_cast<int>(s), buf.view(shards[s].offset, shards[s].count)));
  comm.wait_all(transfers);
  transfers.clear();
  comm.label("pull", 0);
  for (size_t s = 0; s < shards.size(); ++s)
    transfers.push_back(comm.irecv(p + static_cast<int>(s), buf.view(shards[s].offset, shards[s].count)));
  comm.wait_all(transfers);
}

void async_worker(RunState& state, int world) {
  const RunSetup& setup = state.setup;
  const RunPlan& plan = *setup.plan;
  WorkerState& me = state.workers[static_cast<size_t>(world)];
  Buffer buf(setup.scenario->collective.dtype, plan.payload.carried_elems, plan.payload.logical_elems);
  if (setup.regression) me.weights.assign(static_cast<size_t>(setup.regression->parameters()), 0.0);
  const auto group = state.membership.current_shared();
  const std::vector<Chunk> shards = server_shards(setup);
  const double launch = plan.training.launch_seconds(plan.training.buckets.empty() ? -1 : 0);
  for (int round = 0; round < setup.scenario->training.rounds; ++round) {
    announce_round(state, round);
    me.round = round;
    RankRound& times = state.record.times(round, world);
    times.start = sg4::Engine::get_clock();
    compute_iteration(state, world, round);
    times.compute_end = times.collective_start = sg4::Engine::get_clock();
    make_gradient(state, world, me, buf);
    me.input = buf;
    Comm comm(*group, world);
    comm.set_round(round);
    comm.set_data(buf.all());
    comm.begin_collective();
    comm.compute(launch);
    push_and_pull(comm, buf, shards);
    for (size_t i = 0; i < me.weights.size(); ++i) me.weights[i] = static_cast<double>(buf.get(i));
    times.end = sg4::Engine::get_clock();
    times.epoch = group->epoch();
    if (setup.regression) {
      times.model_hash = hash_bytes(me.weights.data(), me.weights.size() * sizeof(double));
      if (world == 0) state.record.round_loss[static_cast<size_t>(round)] = setup.regression->loss(me.weights);
    }
  }
  me.result = std::move(buf);
  me.round = setup.scenario->training.rounds;
  me.fate = WorkerFate::finished;
  me.fate_time = sg4::Engine::get_clock();
}

// A server's side: its shard of the model, the pushes it applies as they arrive, and the
// pulls it answers once the staleness bound allows.
class AsyncServer {
public:
  AsyncServer(RunState& state, int server)
      : state_(state), setup_(state.setup), group_(state.membership.current_shared()), p_(group_->size()),
        rounds_(setup_.scenario->training.rounds), server_(server), comm_(*group_, p_ + server),
        model_(setup_.scenario->collective.dtype, setup_.plan->payload.carried_elems, setup_.plan->payload.logical_elems) {
    const Chunk shard = server_shards(setup_)[static_cast<size_t>(server)];
    mine_ = model_.view(shard.offset, shard.count);
    first_ = first_carried(model_, mine_);
    for (size_t i = 0; i < model_.carried(); ++i) model_.set(i, 0);
    weights_.assign(mine_.count, 0.0);
  }

  void run() {
    const size_t p = static_cast<size_t>(p_);
    pushed_.resize(p);
    receives_.resize(p);
    replies_.resize(p);
    pushes_.assign(p, 0);
    waiting_.assign(p, -1);
    reads_.assign(p, Read{});
    for (size_t w = 0; w < p && rounds_ > 0; ++w) {
      pushed_[w] = model_.scratch(mine_.logical);
      receives_[w] = comm_.irecv(static_cast<int>(w), pushed_[w].holding(mine_));
    }
    for (int answered = 0; answered < p_ * rounds_;) {
      const std::vector<size_t> arrived = comm_.wait_some(receives_);
      comm_.compute(server_cpu(setup_.args.deployment, arrived.size(), mine_.logical_bytes()));
      for (size_t w : arrived) apply(static_cast<int>(w));
      answered += answer();
    }
    for (Request& reply : replies_)
      if (reply.active()) comm_.wait(reply);
  }

private:
  // What a worker last read from this server: the pushes applied then, and the fewest
  // iterations any worker had pushed.
  struct Read {
    int version = 0, everyone = 0;
  };

  void apply(int w) {
    const size_t worker = static_cast<size_t>(w);
    const View gradient = pushed_[worker].holding(mine_);
    if (setup_.regression) {
      const double rate = setup_.scenario->training.learning_rate / p_;
      const Buffer& g = pushed_[worker];
      for (size_t i = 0; i < mine_.count; ++i) {
        weights_[i] -= rate * static_cast<double>(g.get(i));
        model_.set(first_ + i, weights_[i]);
      }
      setup_.op->charge(mine_.logical);
    } else {
      setup_.op->combine(mine_, gradient);
    }
    const int round = pushes_[worker];
    state_.record.updates.push_back({server_, w, round, version_, reads_[worker].version,
                                     round - reads_[worker].everyone, -1, sg4::Engine::get_clock()});
    update_of_[worker] = state_.record.updates.size() - 1;
    ++version_;
    waiting_[worker] = pushes_[worker]++;
    if (pushes_[worker] < rounds_) receives_[worker] = comm_.irecv(w, pushed_[worker].holding(mine_));
  }

  // Answers every pull the bound allows now; returns how many.
  int answer() {
    const int everyone = *std::min_element(pushes_.begin(), pushes_.end());
    const int bound = setup_.args.deployment.staleness;
    std::vector<int> ready;
    for (int w = 0; w < p_; ++w) {
      const int round = waiting_[static_cast<size_t>(w)];
      if (round >= 0 && (bound < 0 || everyone >= round + 1 - bound)) ready.push_back(w);
    }
    if (ready.empty()) return 0;
    comm_.label("pull", 0);
    comm_.compute(server_cpu(setup_.args.deployment, ready.size(), 0));
    for (int w : ready) {
      const size_t worker = static_cast<size_t>(w);
      if (replies_[worker].active()) comm_.wait(replies_[worker]);
      comm_.set_round(waiting_[worker]);
      replies_[worker] = comm_.isend(w, mine_);
      state_.record.updates[update_of_[worker]].reply_version = version_;
      reads_[worker] = {version_, everyone};
      waiting_[worker] = -1;
    }
    return static_cast<int>(ready.size());
  }

  RunState& state_;
  const RunSetup& setup_;
  std::shared_ptr<CommGroup> group_;
  int p_, rounds_, server_;
  Comm comm_;
  Buffer model_;                // the vector's shape; this server's shard is the model it holds
  View mine_;
  size_t first_ = 0;            // the shard's first carried element
  std::vector<double> weights_;  // training a model: the shard's weights
  std::vector<Buffer> pushed_;  // per worker: where its next push arrives
  std::vector<Request> receives_, replies_;
  std::vector<int> pushes_;     // per worker: iterations applied
  std::vector<int> waiting_;    // per worker: the iteration whose pull is unanswered (-1: none)
  std::vector<Read> reads_;
  std::vector<size_t> update_of_ = std::vector<size_t>(static_cast<size_t>(p_));
  int version_ = 0;
};

}  // namespace

void run_async_worker(RunState& state, int world) {
  guarded(state, [&] {
    try {
      async_worker(state, world);
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

void run_async_server(RunState& state, int server) {
  guarded(state, [&] { AsyncServer(state, server).run(); });
}

}  // namespace collsim
