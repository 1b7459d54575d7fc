#include "parallel/step_executor.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <exception>
#include <optional>
#include <tuple>
#include <fmt/format.h>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "comm/comm_group.hpp"
#include "parallel/group_verifier.hpp"
#include "parallel/layout.hpp"
#include "parallel/pipeline_schedule.hpp"
#include "plan/input_data.hpp"
#include "plan/model_plan.hpp"
#include "sim/guarded.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

namespace {

// The communicators of a step; each has its own Comm tag, so that their messages between one
// pair of ranks never match each other's (the pipeline has one tag each way).
enum Communicator { tensor_comm, pipeline_comm, data_comm, expert_comm, expert_data_comm, communicators };
constexpr int pipeline_backward_tag = communicators + 1;
constexpr const char* lane_names[communicators] = {"tensor", "pipeline", "data", "expert", "data"};

struct Place {
  int group = -1, rank = -1;
};

// What the actors share for the run (held by their closures).
struct StepState {
  std::shared_ptr<const RunPlan> plan;
  std::shared_ptr<const StepPlan> step;
  MessageLog log;
  std::array<std::vector<std::vector<int>>, communicators> members;                // [communicator][group]
  std::array<std::vector<std::shared_ptr<CommGroup>>, communicators> groups;       // likewise
  std::vector<std::array<Place, communicators>> places;                           // [world][communicator]
  std::vector<std::array<int, communicators>> sequence;                           // [world]: collectives run so far
  std::vector<RankStepTimes> times;                                               // [world]
  std::vector<double> speed;                                                      // [world]: its GPU's speed (a slow-host fault: below 1)
  std::vector<sg4::SemaphorePtr> bucket_ready, data_done;                         // [world]
  std::vector<StepInterval> intervals;
  GroupVerifier verifier;
  ReduceOp sum{OpKind::sum, Dtype::bfloat16};
  std::exception_ptr failure;  // the first error inside an actor (a bug)
};

void make_groups(StepState& state, Communicator c, std::vector<std::vector<int>> members) {
  state.members[c] = std::move(members);
  for (size_t g = 0; g < state.members[c].size(); ++g) {
    const std::vector<int>& group = state.members[c][g];
    auto comm_group = std::make_shared<CommGroup>(0, group, state.log);
    std::vector<int> localities;
    for (int world : group) localities.push_back(state.plan->locality.ids[static_cast<size_t>(world)]);
    comm_group->set_localities(std::move(localities));
    comm_group->set_overhead(state.plan->model.overhead);
    state.groups[c].push_back(std::move(comm_group));
    for (size_t r = 0; r < group.size(); ++r)
      state.places[static_cast<size_t>(group[r])][c] = {static_cast<int>(g), static_cast<int>(r)};
  }
}

void set_up(StepState& state) {
  const ParallelismSpec& p = state.plan->scenario.parallelism;
  const auto ranks = static_cast<size_t>(state.plan->workers);
  state.places.assign(ranks, {});
  state.sequence.assign(ranks, {});
  state.times.assign(ranks, {});
  state.speed.assign(ranks, 1.0);
  for (size_t r = 0; r < ranks; ++r) {
    state.bucket_ready.push_back(sg4::Semaphore::create(0));
    state.data_done.push_back(sg4::Semaphore::create(0));
  }
  make_groups(state, tensor_comm, dimension_groups(p, Dimension::tensor));
  make_groups(state, pipeline_comm, dimension_groups(p, Dimension::pipeline));
  make_groups(state, data_comm, dimension_groups(p, Dimension::data));
  make_groups(state, expert_comm, dimension_groups(p, Dimension::expert));
  make_groups(state, expert_data_comm, expert_data_groups(p));
}

void record(StepState& state, int world, const char* lane, std::string what, int micro_batch, double start) {
  if (world < max_activity_ranks)
    state.intervals.push_back({world, lane, std::move(what), micro_batch, start, sg4::Engine::get_clock()});
}

// A buffer of `bytes` of bf16 carrying the fewest elements that leave no chunk of a group of
// `ranks` (x channels) without one: the step's collectives are many, and each is verified.
Buffer step_buffer(double bytes, int ranks, int channels) {
  const auto logical = static_cast<uint64_t>(bytes / static_cast<double>(dtype_size(Dtype::bfloat16)));
  const auto chunks = static_cast<uint64_t>(ranks) * static_cast<uint64_t>(channels);
  const uint64_t carried = std::min(logical, std::max(chunks, carried_to_represent(logical, chunks)));
  return Buffer(Dtype::bfloat16, carried, logical);
}

uint64_t seed_of(const StepState& state, int communicator, int sequence) {
  return state.plan->scenario.seed * 1000003 + static_cast<uint64_t>(communicator) * 7919 + static_cast<uint64_t>(sequence);
}

// Runs rank `world`'s part of its group's collective of communicator `c`, verifies it with
// its group, and returns how long it took.
double run_collective(StepState& state, int world, Communicator c, const GroupAlgorithm& algorithm, Collective kind,
                      double bytes, int micro_batch) {
  const Place place = state.places[static_cast<size_t>(world)][c];
  CommGroup& group = *state.groups[c][static_cast<size_t>(place.group)];
  const int sequence = state.sequence[static_cast<size_t>(world)][c]++;
  Comm comm(group, place.rank, c + 1);
  Buffer buf = step_buffer(bytes, group.size(), algorithm.channels);
  const uint64_t seed = seed_of(state, c, sequence);
  fill_input(buf, world, OpKind::sum, seed);
  comm.set_data(buf.all());
  CollectiveArgs args;
  args.op = &state.sum;
  args.channels = algorithm.channels;
  args.segment_elems = segment_elements(CollectiveSpec{}.segment, Dtype::bfloat16);
  const double start = sg4::Engine::get_clock();
  comm.begin_collective();
  algorithm.algorithm->run(comm, buf, args);
  state.verifier.deposit(c, place.group, sequence, kind, state.members[c][static_cast<size_t>(place.group)], place.rank,
                         std::move(buf), seed);
  record(state, world, lane_names[c], std::string(collective_name(kind)), micro_batch, start);
  return sg4::Engine::get_clock() - start;
}

// One rank's compute stream: its stage's passes, in 1F1B order.
class StageRunner {
public:
  StageRunner(StepState& state, int world)
      : state_(state), step_(*state.step), world_(world), times_(state.times[static_cast<size_t>(world)]),
        at_(coordinates_of(state.plan->scenario.parallelism, world)),
        stages_(state.plan->scenario.parallelism.pipeline) {}

  void run() {
    for (const PipelinePass& pass : one_f_one_b(at_.pipeline, stages_, step_.micro_batches)) {
      if (pass.forward) forward(pass.micro_batch);
      else backward(pass.micro_batch);
    }
    const double start = sg4::Engine::get_clock();
    for (Sent& sent : sends_) pipeline_comm_of().wait(sent.request);
    times_.pipeline += sg4::Engine::get_clock() - start;
    times_.compute_end = sg4::Engine::get_clock();
    state_.data_done[static_cast<size_t>(world_)]->acquire();
    times_.end = sg4::Engine::get_clock();
  }

private:
  struct Sent {
    std::unique_ptr<Buffer> data;
    Request request;
  };

  Comm& pipeline_comm_of() {
    if (!pipeline_) {
      const Place place = state_.places[static_cast<size_t>(world_)][pipeline_comm];
      pipeline_.emplace(*state_.groups[pipeline_comm][static_cast<size_t>(place.group)], place.rank, pipeline_comm + 1);
    }
    return *pipeline_;
  }

  void compute(double seconds, const char* what, int micro_batch) {
    const double start = sg4::Engine::get_clock();
    // a slow GPU (a slow-host fault) computes at its speed when the work starts
    const double lasted = seconds / state_.speed[static_cast<size_t>(world_)];
    sg4::this_actor::sleep_for(lasted);
    times_.compute += lasted;
    record(state_, world_, "compute", what, micro_batch, start);
  }

  uint64_t message_seed(bool forward, int micro_batch) const {
    return state_.plan->scenario.seed * 1000003 + (forward ? 1 : 2) * 104729 + static_cast<uint64_t>(micro_batch);
  }

  // Receives the activations (forward) or their gradients (backward) of micro-batch `mb`
  // from the neighbouring stage, and checks that they hold what it sent.
  void receive(bool forward, int mb) {
    const int from = at_.pipeline + (forward ? -1 : 1);
    Comm& comm = pipeline_comm_of();
    Comm tagged = forward ? comm : comm.on_tag(pipeline_backward_tag);
    Buffer got = step_buffer(step_.pipeline_bytes, 1, 1), want = step_buffer(step_.pipeline_bytes, 1, 1);
    const double start = sg4::Engine::get_clock();
    tagged.recv(from, got.all());
    times_.pipeline += sg4::Engine::get_clock() - start;
    record(state_, world_, "pipeline", forward ? "receive activations" : "receive gradients", mb, start);
    fill_input(want, state_.members[pipeline_comm][static_cast<size_t>(state_.places[static_cast<size_t>(world_)][pipeline_comm].group)]
                          [static_cast<size_t>(from)], OpKind::sum, message_seed(forward, mb));
    state_.verifier.message(std::equal(got.data(), got.data() + got.carried() * got.elem_bytes(), want.data()));
  }

  void send(bool forward, int mb) {
    const int to = at_.pipeline + (forward ? 1 : -1);
    Comm& comm = pipeline_comm_of();
    Comm tagged = forward ? comm : comm.on_tag(pipeline_backward_tag);
    auto data = std::make_unique<Buffer>(step_buffer(step_.pipeline_bytes, 1, 1));
    fill_input(*data, world_, OpKind::sum, message_seed(forward, mb));
    Request request = tagged.isend(to, data->all());
    sends_.push_back({std::move(data), std::move(request)});
  }

  void alltoall(int mb) {
    times_.expert += run_collective(state_, world_, expert_comm, step_.expert_alltoall, Collective::alltoall,
                                    step_.block.expert_alltoall_bytes, mb);
  }

  // One block's pass: Megatron's tensor collectives around its compute (an allgather before
  // its share, a reduction after), and a mixture of experts' dispatch and combine around the MLP.
  void block_pass(bool forward, int mb) {
    const auto& collectives = forward ? step_.block.forward_collectives : step_.block.backward_collectives;
    const double seconds = forward ? step_.forward_seconds : step_.backward_seconds;
    const bool moe = step_.block.expert_alltoall_bytes > 0;
    const char* what = forward ? "forward" : "backward";
    int reductions = 0;
    for (const auto& c : collectives) reductions += c.kind != Collective::allgather;
    if (reductions == 0) {
      compute(seconds / 2, what, mb);
      if (moe) alltoall(mb);
      compute(seconds / 2, what, mb);
      if (moe) alltoall(mb);
      return;
    }
    int done = 0;
    for (const auto& c : collectives) {
      if (c.kind != Collective::allgather) {
        compute(seconds / reductions, what, mb);
        if (moe && done == reductions - 1) alltoall(mb);  // combine, before the MLP's reduction
      }
      const GroupAlgorithm& algorithm = c.kind == Collective::allreduce   ? step_.tensor_allreduce
                                        : c.kind == Collective::allgather ? step_.tensor_allgather
                                                                          : step_.tensor_reduce_scatter;
      times_.tensor += run_collective(state_, world_, tensor_comm, algorithm, c.kind, c.bytes, mb);
      if (c.kind != Collective::allgather && moe && ++done == 1) alltoall(mb);  // dispatch, after attention
    }
  }

  void forward(int mb) {
    if (at_.pipeline > 0) receive(true, mb);
    for (int b = 0; b < blocks(); ++b) block_pass(true, mb);
    if (at_.pipeline == stages_ - 1) compute(step_.output_forward_seconds, "logits", mb);
    if (at_.pipeline < stages_ - 1) send(true, mb);
  }

  void backward(int mb) {
    if (at_.pipeline < stages_ - 1) receive(false, mb);
    if (at_.pipeline == stages_ - 1) compute(2 * step_.output_forward_seconds, "logits backward", mb);
    const bool last = mb == step_.micro_batches - 1;
    const auto& buckets = step_.buckets[static_cast<size_t>(at_.pipeline)];
    size_t next = 0;
    for (int b = 1; b <= blocks(); ++b) {
      block_pass(false, mb);
      // the last micro-batch's backward makes the gradients: hand each full bucket to the data stream
      for (; last && next < buckets.size() && buckets[next].ready_after == b; ++next)
        state_.bucket_ready[static_cast<size_t>(world_)]->release();
    }
    if (at_.pipeline > 0) send(false, mb);
  }

  int blocks() const { return step_.stage_blocks[static_cast<size_t>(at_.pipeline)]; }

  StepState& state_;
  const StepPlan& step_;
  int world_;
  RankStepTimes& times_;
  LayoutCoordinates at_;
  int stages_;
  std::optional<Comm> pipeline_;
  std::deque<Sent> sends_;
};

// One rank's data-parallel stream: each bucket reduced once backward made it; the experts'
// gradients in their expert-data group; with the distributed optimizer, the parameters
// all-gathered after the step.
void run_data_stream(StepState& state, int world) {
  const StepPlan& step = *state.step;
  const int stage = coordinates_of(state.plan->scenario.parallelism, world).pipeline;
  RankStepTimes& times = state.times[static_cast<size_t>(world)];
  const auto& buckets = step.buckets[static_cast<size_t>(stage)];
  const Collective reduce = step.layout.zero_stage > 0 ? Collective::reduce_scatter : Collective::allreduce;
  for (const GradientBucket& bucket : buckets) {
    state.bucket_ready[static_cast<size_t>(world)]->acquire();
    if (step.data_reduce.algorithm != nullptr)
      times.data_busy += run_collective(state, world, data_comm, step.data_reduce, reduce, bucket.bytes, -1);
  }
  if (step.expert_data_reduce.algorithm != nullptr)
    times.data_busy += run_collective(state, world, expert_data_comm, step.expert_data_reduce, Collective::allreduce,
                                      step.expert_gradient_bytes[static_cast<size_t>(stage)], -1);
  if (step.data_gather.algorithm != nullptr)
    for (const GradientBucket& bucket : buckets)
      times.data_busy += run_collective(state, world, data_comm, step.data_gather, Collective::allgather, bucket.bytes, -1);
  state.data_done[static_cast<size_t>(world)]->release();
}

// A slow GPU (slow-host: its ranks compute `factor` as fast) or NIC (slow-link: its links'
// bandwidth times `factor`, their latency changed), from `at`, undone after `duration`.
void inject(StepState& state, const PlannedFault& fault) {
  // (a fault from 0 strikes before any rank starts: its injector runs first and does not yield)
  if (fault.spec.at.value_or(0) > 0) sg4::this_actor::sleep_until(*fault.spec.at);
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  std::vector<std::tuple<sg4::Link*, double, double>> before;
  if (fault.spec.kind == FaultKind::slow_host)
    for (int rank : fault.ranks) state.speed[static_cast<size_t>(rank)] *= fault.spec.factor;
  for (const std::string& name : fault.links) {
    sg4::Link* link = engine.link_by_name(name);
    before.emplace_back(link, link->get_bandwidth(), link->get_latency());
    link->set_bandwidth(link->get_bandwidth() * fault.spec.factor);
    if (fault.spec.latency) link->set_latency(*fault.spec.latency);
  }
  if (!fault.spec.duration) return;
  sg4::this_actor::sleep_for(*fault.spec.duration);
  if (fault.spec.kind == FaultKind::slow_host)
    for (int rank : fault.ranks) state.speed[static_cast<size_t>(rank)] /= fault.spec.factor;
  for (const auto& [link, bandwidth, latency] : before) {
    link->set_bandwidth(bandwidth);
    link->set_latency(latency);
  }
}

}  // namespace

StepResult simulate_step(const std::shared_ptr<const RunPlan>& plan, std::shared_ptr<const StepPlan> step) {
  auto shared = std::make_shared<StepState>();
  shared->plan = plan;
  shared->step = std::move(step);
  shared->log.set_limit(plan->kept_messages);
  set_up(*shared);
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  for (const PlannedFault& fault : plan->faults)
    sg4::Actor::create(fmt::format("fault-{}", fault.index), engine.host_by_name(plan->control_host), [shared, fault] {
      guarded(shared->failure, [&] { inject(*shared, fault); });
    })->daemonize();
  for (int world = 0; world < plan->workers; ++world) {
    sg4::Host* host = engine.host_by_name(plan->rank_hosts[static_cast<size_t>(world)]);
    sg4::Actor::create(fmt::format("rank-{}", world), host, [shared, world] {
      guarded(shared->failure, [&] { StageRunner(*shared, world).run(); });
    });
    sg4::Actor::create(fmt::format("rank-{}-data", world), host, [shared, world] {
      guarded(shared->failure, [&] { run_data_stream(*shared, world); });
    });
  }
  sg4::Engine::get_instance()->run();
  if (shared->failure) std::rethrow_exception(shared->failure);
  StepResult result;
  result.plan = shared->step;
  result.ranks = shared->times;
  result.intervals = std::move(shared->intervals);
  result.verification = shared->verifier.merged();
  result.collectives = shared->verifier.verified_collectives();
  result.pipeline_messages = shared->verifier.verified_messages();
  for (size_t r = 0; r < result.ranks.size(); ++r) {
    if (result.ranks[r].end <= 0 && result.stall.empty()) result.stall = fmt::format("rank {} never finished its step", r);
    if (result.ranks[r].end > result.step_time) {
      result.step_time = result.ranks[r].end;
      result.critical_rank = static_cast<int>(r);
    }
  }
  if (result.stall.empty() && shared->verifier.pending() > 0)
    result.stall = fmt::format("{} collectives never completed", shared->verifier.pending());
  result.messages = std::move(shared->log);
  return result;
}

}  // namespace collsim
