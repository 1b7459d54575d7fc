#include "parallel/step_executor.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <exception>
#include <optional>
#include <tuple>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "comm/comm_group.hpp"
#include "parallel/group_switches.hpp"
#include "parallel/group_verifier.hpp"
#include "parallel/layout.hpp"
#include "parallel/pipeline_schedule.hpp"
#include "parallel/step_state.hpp"
#include "plan/input_data.hpp"
#include "plan/model_plan.hpp"
#include "sim/guarded.hpp"
#include "util/units.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

namespace {

bool is_data(Communicator c) { return c == data_comm || c == rebuilt_data_comm; }

}  // namespace

const std::vector<DataChoice>& data_choices_of(const StepState& state, Communicator c) {
  return c == rebuilt_data_comm && !state.rebuilt_choices.empty() ? state.rebuilt_choices : state.step->data_choices;
}

namespace {

// Communicator c's copies of each group: the data communicators' one per choice of their
// bucket collectives (StepPlan::data_choices: a choice of NCCL's brings its own transport);
// the tensor communicator's a second for the pipeline's scatter/gather (its allgather runs on
// NCCL's send/recv where the block's allreduce may run NCCL's own); the others' one.
size_t choices_of(const StepState& state, Communicator c) {
  if (is_data(c)) return std::max<size_t>(1, state.step->data_choices.size());
  return c == tensor_comm && state.step->pipeline_gather.algorithm != nullptr ? 2 : 1;
}

constexpr size_t pipeline_gather_choice = 1;  // the tensor communicator's copy for the scatter/gather

// What communicator c's messages pay beyond their links in its choice `choice` (on GPUs,
// parallel/gpu_costs.hpp); nullptr: nothing.
std::shared_ptr<const MessageCost> message_cost_of(const StepState& state, Communicator c, size_t choice) {
  const StepPlan& step = *state.step;
  if (is_data(c)) {
    const auto& choices = data_choices_of(state, c);
    if (choice >= choices.size()) return nullptr;
    const DataChoice& data = choices[choice];
    return data.reduce.cost ? data.reduce.cost : data.gather.cost;
  }
  switch (c) {
    case tensor_comm:
      // One transport serves the block's collectives: either NCCL's allreduce alone (NCCL's
      // algorithms run an allreduce only) or collsim's on NCCL's send/recv, whose price per
      // message depends on the group alone (its launch is each algorithm's own, GroupAlgorithm::launch)
      if (choice == pipeline_gather_choice) return step.pipeline_gather.cost;
      for (const GroupAlgorithm* a : {&step.tensor_allreduce, &step.tensor_allgather, &step.tensor_reduce_scatter})
        if (a->cost) return a->cost;
      return nullptr;
    case pipeline_comm: return step.pipeline_cost;
    case expert_comm: return step.expert_alltoall.cost;
    case expert_data_comm: return step.expert_data_reduce.cost;
    case rebuilt_expert_data_comm: return state.rebuilt_expert_data_reduce.cost;
    default: break;
  }
  return nullptr;
}

// The allreduce of communicator c's choice `choice` that reduces in switches (NVLS, CollNet), or nullptr.
const GroupAlgorithm* switch_algorithm_of(const StepState& state, Communicator c, size_t choice) {
  const StepPlan& step = *state.step;
  const GroupAlgorithm* a = c == tensor_comm && choice == 0                         ? &step.tensor_allreduce
                            : c == data_comm && choice < step.data_choices.size()   ? &step.data_choices[choice].reduce
                            : c == expert_data_comm                                 ? &step.expert_data_reduce
                                                                                    : nullptr;
  return a != nullptr && a->algorithm != nullptr && a->algorithm->switch_run != nullptr ? a : nullptr;
}

}  // namespace

void make_groups(StepState& state, Communicator c, std::vector<std::vector<int>> members, int epoch) {
  state.members[c] = std::move(members);
  for (std::shared_ptr<CommGroup>& old : state.groups[c]) state.retired_groups.push_back(std::move(old));
  state.groups[c].clear();
  state.switch_hosts[c].clear();
  const RunSwitches switches = run_switches(*state.plan);
  for (size_t choice = 0; choice < choices_of(state, c); ++choice)
    for (size_t g = 0; g < state.members[c].size(); ++g) {
      const std::vector<int>& group = state.members[c][g];
      auto comm_group = std::make_shared<CommGroup>(epoch, group, state.log);
      std::vector<int> localities;
      for (int world : group) localities.push_back(state.plan->locality.ids[static_cast<size_t>(world)]);
      comm_group->set_localities(std::move(localities));
      comm_group->set_overhead(state.plan->model.overhead);
      comm_group->set_message_cost(message_cost_of(state, c, choice));
      std::vector<std::string>& hosts = state.switch_hosts[c].emplace_back();
      if (const GroupAlgorithm* a = switch_algorithm_of(state, c, choice)) {
        GroupSwitches ports = group_switches(switches, *nccl::algo_of(a->algorithm->name), group, state.plan->locality.ids,
                                             fmt::format("parallelism.step.algorithms.{}", c == tensor_comm ? "tensor" : "data"));
        comm_group->set_switches(std::move(ports.ports));
        hosts = std::move(ports.hosts);
      }
      state.groups[c].push_back(std::move(comm_group));
      for (size_t r = 0; r < group.size(); ++r)
        state.places[static_cast<size_t>(group[r])][c] = {static_cast<int>(g), static_cast<int>(r)};
    }
}

void stream_ended(StepState& state, int world, bool compute) {
  const auto w = static_cast<size_t>(world);
  (compute ? state.compute_done : state.data_done)[w] = 1;
  if (state.compute_done[w] && state.data_done[w]) state.times[w].end = sg4::Engine::get_clock();
}

namespace {

constexpr int pipeline_backward_tag = communicators + 1;
// Above every pipeline tag (pipeline_backward_tag + 2 x chunks, chunks at most 1024).
constexpr int choice_tag_stride = 1 << 16;
constexpr const char* lane_names[communicators] = {"tensor", "pipeline", "data", "expert", "data", "data", "data"};
// The trace's names of the communicators (parallel.step.runs[].communicator).
constexpr const char* communicator_names[communicators] = {"tensor", "pipeline", "data", "expert", "expert-data",
                                                           "data (rebuilt)", "expert-data (rebuilt)"};

void set_up(StepState& state) {
  const ParallelismSpec& p = state.plan->scenario.parallelism;
  const auto ranks = static_cast<size_t>(state.plan->workers);
  state.places.assign(ranks, {});
  state.sequence.assign(ranks, {});
  state.times.assign(ranks, {});
  state.speed.assign(ranks, 1.0);
  state.buckets_made.assign(ranks, 0);
  state.compute_done.assign(ranks, 0);
  state.data_done.assign(ranks, 0);
  state.compute_actors.assign(ranks, nullptr);
  state.data_actors.assign(ranks, nullptr);
  state.lost_replica.assign(static_cast<size_t>(p.data), 0);
  for (size_t r = 0; r < ranks; ++r) state.bucket_ready.push_back(sg4::Semaphore::create(0));
  make_groups(state, tensor_comm, dimension_groups(p, Dimension::tensor), 0);
  make_groups(state, pipeline_comm, dimension_groups(p, Dimension::pipeline), 0);
  make_groups(state, data_comm, dimension_groups(p, Dimension::data), 0);
  make_groups(state, expert_comm, dimension_groups(p, Dimension::expert), 0);
  make_groups(state, expert_data_comm, expert_data_groups(p), 0);
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
                      double bytes, int micro_batch, size_t choice = 0) {
  const Place place = state.places[static_cast<size_t>(world)][c];
  // choice k's copy of the group, on mailboxes of its own (tag): its messages pay its transport
  const size_t copy = choice * state.members[c].size() + static_cast<size_t>(place.group);
  CommGroup& group = *state.groups[c][copy];
  const int sequence = state.sequence[static_cast<size_t>(world)][c]++;
  const int tag = c + 1 + static_cast<int>(choice) * choice_tag_stride;
  Comm comm(group, place.rank, tag);
  Buffer buf = step_buffer(bytes, group.size(), algorithm.channels);
  const uint64_t seed = seed_of(state, c, sequence);
  fill_input(buf, world, OpKind::sum, seed);
  comm.set_data(buf.all());
  CollectiveArgs args;
  args.op = &state.sum;
  args.channels = algorithm.channels;
  args.segment_elems = algorithm.segment_elems > 0 ? algorithm.segment_elems : segment_elements(CollectiveSpec{}.segment, Dtype::bfloat16);
  args.fifo = algorithm.fifo;
  args.hop_inside = algorithm.hop_inside;
  args.hop_across = algorithm.hop_across;
  // the group's switches are ready when its first rank reaches the collective, as hardware is
  if (algorithm.algorithm->switch_run != nullptr) {
    int& next = state.switch_started[&group];
    if (sequence >= next) {
      next = sequence + 1;
      start_switch_sides(state.groups[c][copy], state.switch_hosts[c][copy], tag, algorithm.algorithm->switch_run,
                         buf.dtype(), buf.carried(), buf.size(), args, state.failure);
    }
  }
  const double start = sg4::Engine::get_clock();
  if (algorithm.launch > 0) sg4::this_actor::sleep_for(algorithm.launch);  // the kernel's launch, for its own vector
  algorithm.algorithm->run(comm, buf, args);
  state.verifier.deposit(c, place.group, sequence, kind, state.members[c][static_cast<size_t>(place.group)], place.rank,
                         std::move(buf), seed, start, sg4::Engine::get_clock());
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
    for (const PipelinePass& pass : interleaved_one_f_one_b(at_.pipeline, stages_, step_.chunks, step_.micro_batches)) {
      if (pass.forward) forward(pass.micro_batch, pass.chunk);
      else backward(pass.micro_batch, pass.chunk);
    }
    const double start = sg4::Engine::get_clock();
    for (; sends_finished_ < sends_posted_; ++sends_finished_) sends_done_->acquire();
    if (*send_failure_) std::rethrow_exception(*send_failure_);
    times_.pipeline += sg4::Engine::get_clock() - start;
    times_.pipeline_messages += sg4::Engine::get_clock() - start;  // its own sends' transfers
    times_.compute_end = sg4::Engine::get_clock();
    stream_ended(state_, world_, true);
  }

private:

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

  uint64_t message_seed(bool forward, int micro_batch, int chunk) const {
    return state_.plan->scenario.seed * 1000003 + (forward ? 1 : 2) * 104729 + static_cast<uint64_t>(micro_batch) +
           static_cast<uint64_t>(chunk) * 15485863;
  }

  // The pipeline's messages of model chunk `chunk` each way, on tags of their own: with
  // interleaving a pair of stages carries several chunks' messages, which the two sides pass
  // in different orders (each chunk's in micro-batch order).
  Comm pipeline_tagged(bool forward, int chunk) {
    Comm& comm = pipeline_comm_of();
    if (chunk == 0) return forward ? comm : comm.on_tag(pipeline_backward_tag);
    return comm.on_tag(pipeline_backward_tag + 2 * chunk + (forward ? 0 : 1));
  }

  // The stages before and after this one's chunk `chunk` (virtual stage chunk x P + stage):
  // the last stage's chunk c hands on to the first stage's chunk c + 1.
  int virtual_stage(int chunk) const { return chunk * stages_ + at_.pipeline; }
  int last_virtual_stage() const { return stages_ * step_.chunks - 1; }
  int previous_stage() const { return (at_.pipeline + stages_ - 1) % stages_; }
  int next_stage() const { return (at_.pipeline + 1) % stages_; }

  // Receives the activations (forward) or their gradients (backward) of micro-batch `mb`
  // from the neighbouring stage, and checks that they hold what it sent.
  void receive(bool forward, int mb, int chunk) {
    const int from = forward ? previous_stage() : next_stage();
    Comm tagged = pipeline_tagged(forward, chunk);
    Buffer got = step_buffer(step_.pipeline_bytes, 1, 1), want = step_buffer(step_.pipeline_bytes, 1, 1);
    const double start = sg4::Engine::get_clock();
    tagged.recv(from, got.all());
    const double now = sg4::Engine::get_clock();
    times_.pipeline += now - start;
    // the wait until the other stage sent is the bubble, the rest the message's transfer
    const auto posted = state_.pipeline_posted.find(pipeline_key(world_, forward, chunk, mb));
    if (posted != state_.pipeline_posted.end()) {
      times_.pipeline_messages += now - std::clamp(posted->second, start, now);
      state_.pipeline_posted.erase(posted);
    }
    record(state_, world_, "pipeline", forward ? "receive activations" : "receive gradients", mb, start);
    fill_input(want, state_.members[pipeline_comm][static_cast<size_t>(state_.places[static_cast<size_t>(world_)][pipeline_comm].group)]
                          [static_cast<size_t>(from)], OpKind::sum, message_seed(forward, mb, chunk));
    state_.verifier.message(std::equal(got.data(), got.data() + got.carried() * got.elem_bytes(), want.data()));
    // the scatter/gather: the tensor group puts the whole activation together from its 1/t parts
    if (step_.pipeline_gather.algorithm != nullptr)
      times_.tensor += run_collective(state_, world_, tensor_comm, step_.pipeline_gather, Collective::allgather,
                                      step_.pipeline_gather_bytes, mb, pipeline_gather_choice);
  }

  void send(bool forward, int mb, int chunk) {
    const int to = forward ? next_stage() : previous_stage();
    Comm tagged = pipeline_tagged(forward, chunk);
    auto data = std::make_shared<Buffer>(step_buffer(step_.pipeline_bytes, 1, 1));
    fill_input(*data, world_, OpKind::sum, message_seed(forward, mb, chunk));
    // sent asynchronously, from an actor of its own: a send left unwaited by the stream that
    // posted it stays on that actor's list of activities in SimGrid 3.32 (a std::list that
    // every transfer of the actor scans when it ends: CommImpl::finish), which made a step
    // with hundreds of micro-batches quadratic in them
    ++sends_posted_;
    const int receiver = state_.members[pipeline_comm][static_cast<size_t>(
        state_.places[static_cast<size_t>(world_)][pipeline_comm].group)][static_cast<size_t>(to)];
    state_.pipeline_posted[pipeline_key(receiver, forward, chunk, mb)] = sg4::Engine::get_clock();
    sg4::Actor::create("pipeline-send", sg4::this_actor::get_host(),
                       [tagged, to, data, done = sends_done_, failure = send_failure_]() mutable {
                         try {
                           tagged.send(to, data->all());
                         } catch (const simgrid::ForcefulKillException&) {
                           throw;
                         } catch (const simgrid::Exception&) {  // the stream rethrows it when it waits
                           if (!*failure) *failure = std::current_exception();
                         }
                         done->release();
                       })
        ->daemonize();  // a replica that leaves leaves its sends unmatched
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

  void forward(int mb, int chunk) {
    const int at = virtual_stage(chunk);
    if (at > 0) receive(true, mb, chunk);
    for (int b = 0; b < chunk_blocks(); ++b) block_pass(true, mb);
    if (at == last_virtual_stage()) compute(step_.output_forward_seconds, "logits", mb);
    else send(true, mb, chunk + (at_.pipeline == stages_ - 1 ? 1 : 0));
  }

  void backward(int mb, int chunk) {
    const int at = virtual_stage(chunk);
    if (at < last_virtual_stage()) receive(false, mb, chunk);
    else compute(2 * step_.output_forward_seconds, "logits backward", mb);
    const bool last = mb == step_.micro_batches - 1;
    const auto& buckets = step_.buckets[static_cast<size_t>(at_.pipeline)];
    for (int b = 1; b <= chunk_blocks(); ++b) {
      block_pass(false, mb);
      // the last micro-batch's backward of each chunk (the last chunk first) makes the
      // gradients: hand each full bucket to the data stream
      if (!last) continue;
      ++made_blocks_;
      for (; next_bucket_ < buckets.size() && buckets[next_bucket_].ready_after == made_blocks_; ++next_bucket_) {
        ++state_.buckets_made[static_cast<size_t>(world_)];
        state_.bucket_ready[static_cast<size_t>(world_)]->release();
      }
    }
    if (at > 0) send(false, mb, chunk - (at_.pipeline == 0 ? 1 : 0));
  }

  int chunk_blocks() const { return step_.stage_blocks[static_cast<size_t>(at_.pipeline)] / step_.chunks; }

  StepState& state_;
  const StepPlan& step_;
  int world_;
  RankStepTimes& times_;
  LayoutCoordinates at_;
  int stages_;
  std::optional<Comm> pipeline_;
  int sends_posted_ = 0, sends_finished_ = 0;
  sg4::SemaphorePtr sends_done_ = sg4::Semaphore::create(0);  // a token per pipeline send completed
  std::shared_ptr<std::exception_ptr> send_failure_ = std::make_shared<std::exception_ptr>();
  int made_blocks_ = 0;     // blocks whose gradients the last micro-batch's backward has made
  size_t next_bucket_ = 0;  // the next bucket to hand to the data stream
};

}  // namespace

// One rank's data-parallel stream: each bucket reduced once backward made it; the experts'
// gradients in their expert-data group; with the distributed optimizer, the parameters
// all-gathered after the step. A group of one (the only replica left) has nothing to reduce.
void run_data_stream(StepState& state, int world, Communicator data) {
  const StepPlan& step = *state.step;
  const int stage = coordinates_of(state.plan->scenario.parallelism, world).pipeline;
  RankStepTimes& times = state.times[static_cast<size_t>(world)];
  const auto& buckets = step.buckets[static_cast<size_t>(stage)];
  const Collective reduce = step.layout.zero_stage > 0 ? Collective::reduce_scatter : Collective::allreduce;
  const Place place = state.places[static_cast<size_t>(world)][data];
  const bool alone = state.members[data][static_cast<size_t>(place.group)].size() < 2;
  const auto& choices = step.bucket_choice[static_cast<size_t>(stage)];
  for (size_t b = 0; b < buckets.size(); ++b) {
    state.bucket_ready[static_cast<size_t>(world)]->acquire();
    const auto choice = static_cast<size_t>(choices[b]);
    const GroupAlgorithm& algorithm = data_choices_of(state, data)[choice].reduce;
    if (algorithm.algorithm != nullptr && !alone)
      times.data_busy += run_collective(state, world, data, algorithm, reduce, buckets[b].bytes, -1, choice);
  }
  const Communicator expert_data = data == data_comm ? expert_data_comm : rebuilt_expert_data_comm;
  const Place expert_place = state.places[static_cast<size_t>(world)][expert_data];
  const GroupAlgorithm& experts = data == data_comm ? step.expert_data_reduce : state.rebuilt_expert_data_reduce;
  if (experts.algorithm != nullptr && expert_place.group >= 0 &&
      state.members[expert_data][static_cast<size_t>(expert_place.group)].size() > 1)
    times.data_busy += run_collective(state, world, expert_data, experts, Collective::allreduce,
                                      step.expert_gradient_bytes[static_cast<size_t>(stage)], -1);
  for (size_t b = 0; b < buckets.size() && !alone; ++b) {
    const auto choice = static_cast<size_t>(choices[b]);
    const GroupAlgorithm& algorithm = data_choices_of(state, data)[choice].gather;
    if (algorithm.algorithm != nullptr)
      times.data_busy += run_collective(state, world, data, algorithm, Collective::allgather, buckets[b].bytes, -1, choice);
  }
  stream_ended(state, world, false);
}

namespace {

// A slow GPU (slow-host: its ranks compute `factor` as fast) or NIC (slow-link: its links'
// bandwidth times `factor`, their latency changed), from `at`, undone after `duration`; a
// lost worker (preempt, link-down) in parallel/step_recovery.cpp.
void inject(const std::shared_ptr<StepState>& shared, const PlannedFault& fault) {
  StepState& state = *shared;
  // (a fault from 0 strikes before any rank starts: its injector runs first and does not yield)
  if (fault.spec.at.value_or(0) > 0) sg4::this_actor::sleep_until(*fault.spec.at);
  if (fault.spec.kind == FaultKind::preempt || fault.spec.kind == FaultKind::link_down) return lose_workers(shared, fault);
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

// A rank's stream: a stream that recovery stopped (its replica left, or its data-parallel
// group was rebuilt) may see its transfer fail as it stops: its work is abandoned. A
// transfer broken by a lost worker under recovery.policy "none" leaves the rank unfinished
// (the step stalls, and says where); anything else thrown is a bug.
template <typename Body>
void stream_guarded(StepState& state, int world, Body body) {
  guarded(state.failure, [&] {
    try {
      body();
    } catch (const simgrid::Exception&) {
      const aid_t me = sg4::this_actor::get_pid();
      const auto w = static_cast<size_t>(world);
      auto running = [&](const sg4::ActorPtr& actor) { return actor && actor->get_pid() == me; };
      if (!running(state.compute_actors[w]) && !running(state.data_actors[w])) return;
      if (state.plan->scenario.recovery.policy == RecoveryPolicy::rebuild) throw;
      state.broken.push_back(fmt::format("rank {} at {}", world, format_time(sg4::Engine::get_clock())));
    }
  });
}

void start_compute_stream(const std::shared_ptr<StepState>& shared, int world) {
  sg4::Host* host = sg4::Engine::get_instance()->host_by_name(shared->plan->rank_hosts[static_cast<size_t>(world)]);
  shared->compute_actors[static_cast<size_t>(world)] = sg4::Actor::create(
      fmt::format("rank-{}", world), host,
      [shared, world] { stream_guarded(*shared, world, [&] { StageRunner(*shared, world).run(); }); });
}

// Why a step did not end: the ranks left unfinished, and the transfers that broke.
std::string stall_of(const StepState& state, const StepResult& result) {
  if (!state.stopped.empty()) return "recovery " + state.stopped;
  std::vector<int> unfinished;
  for (size_t r = 0; r < result.ranks.size(); ++r)
    if (!result.ranks[r].dropped && result.ranks[r].end <= 0) unfinished.push_back(static_cast<int>(r));
  if (unfinished.empty()) {
    if (state.verifier.pending() == 0) return "";
    return fmt::format("{} collectives never completed", state.verifier.pending());
  }
  std::string text = unfinished.size() == 1 ? fmt::format("rank {} never finished its step", unfinished.front())
                                            : fmt::format("{} ranks never finished their step (rank {} first)",
                                                          unfinished.size(), unfinished.front());
  for (const PlannedFault& fault : state.plan->faults)
    if (fault.spec.kind == FaultKind::preempt || fault.spec.kind == FaultKind::link_down)
      text += fmt::format("; {} lost {} at {}", fault.spec.kind == FaultKind::preempt ? "preempt" : "link-down",
                          fault.target, format_time(fault.spec.at.value_or(0)));
  if (!state.broken.empty())
    text += fmt::format("; transfers broke: {}{}",
                        fmt::join(state.broken.begin(), state.broken.begin() + std::min<size_t>(state.broken.size(), 4), ", "),
                        state.broken.size() > 4 ? ", ..." : "");
  if (state.plan->scenario.recovery.policy != RecoveryPolicy::rebuild && !state.plan->faults.empty())
    text += "; with recovery.policy \"none\" the step waits for ever: \"rebuild\" would drop the lost worker's replica "
            "and go on";
  return text;
}

}  // namespace

void start_data_stream(const std::shared_ptr<StepState>& shared, int world, Communicator data) {
  sg4::Host* host = sg4::Engine::get_instance()->host_by_name(shared->plan->rank_hosts[static_cast<size_t>(world)]);
  shared->data_actors[static_cast<size_t>(world)] = sg4::Actor::create(
      fmt::format("rank-{}-data", world), host,
      [shared, world, data] { stream_guarded(*shared, world, [&] { run_data_stream(*shared, world, data); }); });
}

const char* step_communicator_name(int communicator) {
  return communicator >= 0 && communicator < communicators ? communicator_names[communicator] : "?";
}

StepResult simulate_step(const std::shared_ptr<const RunPlan>& plan, std::shared_ptr<const StepPlan> step) {
  auto shared = std::make_shared<StepState>();
  shared->plan = plan;
  shared->step = std::move(step);
  shared->log.set_limit(plan->kept_messages);
  set_up(*shared);
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  for (const PlannedFault& fault : plan->faults)
    sg4::Actor::create(fmt::format("fault-{}", fault.index), engine.host_by_name(plan->control_host), [shared, fault] {
      guarded(shared->failure, [&] { inject(shared, fault); });
    })->daemonize();
  for (int world = 0; world < plan->workers; ++world) {
    start_compute_stream(shared, world);
    start_data_stream(shared, world, data_comm);
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
  result.runs = std::move(shared->verifier.runs());
  for (size_t r = 0; r < result.ranks.size(); ++r)
    if (!result.ranks[r].dropped && result.ranks[r].end > result.step_time) {
      result.step_time = result.ranks[r].end;
      result.critical_rank = static_cast<int>(r);
    }
  result.stall = stall_of(*shared, result);
  const auto lost = static_cast<double>(std::count(shared->lost_replica.begin(), shared->lost_replica.end(), 1));
  result.kept_fraction = 1 - lost / static_cast<double>(shared->lost_replica.size());
  result.recoveries = std::move(shared->recoveries);
  for (StepRecovery& recovery : result.recoveries)
    if (result.stall.empty() && !recovery.stopped) recovery.completed = result.step_time;
  result.messages = std::move(shared->log);
  return result;
}

}  // namespace collsim
