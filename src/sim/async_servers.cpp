#include "sim/async_servers.hpp"

#include <algorithm>
#include <simgrid/s4u/Engine.hpp>

#include "comm/comm.hpp"
#include "sim/async_layout.hpp"
#include "sim/guarded.hpp"
#include "sim/streams.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

// A server's side: its shard of every bucket of the model, the pushes it applies as they
// arrive, and the pulls it answers once the staleness bound allows. A slot is one pusher's
// pushes of one bucket (pusher-major: slot i K + b), each on the bucket's mailboxes.
class AsyncServer {
public:
  AsyncServer(RunState& state, int server)
      : state_(state), setup_(state.setup), layout_(async_layout(*setup_.plan)),
        group_(state.membership.current_shared()), p_(group_->size()), rounds_(setup_.scenario->training.rounds),
        server_(server), k_(layout_.buckets.size()), comm_(*group_, p_ + server) {
    for (size_t b = 0; b < k_; ++b) {
      const AsyncBucket& bucket = layout_.buckets[b];
      Unit unit{Buffer(setup_.scenario->collective.dtype, bucket.map), {}, 0, {},
                layout_.bucketed ? bucket_comm(comm_, b) : comm_};
      const Chunk shard = bucket.shards[static_cast<size_t>(server)];
      for (size_t i = 0; i < unit.model.carried(); ++i) unit.model.set(i, 0);
      unit.mine = unit.model.view(shard.offset, shard.count);
      unit.first = static_cast<size_t>(unit.mine.data - unit.model.data()) / unit.model.elem_bytes();
      unit.weights.assign(unit.mine.count, 0.0);
      unit.comm.set_data(unit.model.all(), bucket.offset);
      if (layout_.bucketed) unit.comm.set_bucket(static_cast<int>(b));
      units_.push_back(std::move(unit));
    }
  }

  void run() {
    const size_t slots = layout_.nodes.size() * k_;
    slots_.resize(slots);
    receives_.resize(slots);
    for (size_t slot = 0; slot < slots && rounds_ > 0; ++slot) {
      Unit& unit = units_[slot % k_];
      slots_[slot].pushed = unit.model.scratch(unit.mine.logical);
      receives_[slot] = unit.comm.irecv(pusher(slot), slots_[slot].pushed.holding(unit.mine));
    }
    for (size_t answered = 0; answered < slots * static_cast<size_t>(rounds_);) {
      const std::vector<size_t> arrived = comm_.wait_some(receives_);
      handle(arrived);
      for (size_t slot : arrived) apply(slot);
      answered += answer();
    }
    for (Slot& slot : slots_)
      if (slot.reply.active()) comm_.wait(slot.reply);
  }

private:
  // One bucket's shard on this server, and the mailboxes its pushes and pulls use.
  struct Unit {
    Buffer model;                  // the bucket's shape; this server's shard of it is the model it holds
    View mine;
    size_t first = 0;              // the shard's first carried element in `model`
    std::vector<double> weights;   // training a model: the shard's weights
    Comm comm;
  };
  // What a pusher last read of a bucket from this server: the pushes the server had
  // applied then, and the fewest iterations of that bucket any pusher had pushed.
  struct Read {
    int version = 0, everyone = 0;
  };
  struct Slot {
    Buffer pushed;         // where the pusher's next push of the bucket arrives
    Request reply;
    int pushes = 0;        // iterations applied
    int waiting = -1;      // the iteration whose pull is unanswered (-1: none)
    Read read;
    size_t update = 0;     // its last update in the record
  };

  int pusher(size_t slot) const { return layout_.nodes[slot / k_].front(); }

  // The CPU's handling of the pushes that arrived together, bucket by bucket (each its size).
  void handle(const std::vector<size_t>& arrived) {
    double seconds = 0;
    for (size_t b = 0; b < k_; ++b) {
      const auto count = static_cast<size_t>(std::count_if(arrived.begin(), arrived.end(), [&](size_t slot) {
        return slot % k_ == b;
      }));
      if (count > 0) seconds += server_cpu(setup_.args.deployment, count, units_[b].mine.logical_bytes());
    }
    comm_.compute(seconds);
  }

  void apply(size_t slot) {
    Unit& unit = units_[slot % k_];
    Slot& mine = slots_[slot];
    const View gradient = mine.pushed.holding(unit.mine);
    if (setup_.regression) {
      const double rate = setup_.scenario->training.learning_rate / p_;
      for (size_t i = 0; i < unit.mine.count; ++i) {
        unit.weights[i] -= rate * static_cast<double>(mine.pushed.get(i));
        unit.model.set(unit.first + i, unit.weights[i]);
      }
      setup_.op->charge(unit.mine.logical);
    } else {
      setup_.op->combine(unit.mine, gradient);
    }
    ServerUpdate update;
    update.server = server_;
    update.worker = pusher(slot);
    update.round = mine.pushes;
    update.bucket = layout_.bucketed ? static_cast<int>(slot % k_) : -1;
    update.version = version_;
    update.read_version = mine.read.version;
    update.staleness = mine.pushes - mine.read.everyone;
    update.time = sg4::Engine::get_clock();
    state_.record.updates.push_back(update);
    mine.update = state_.record.updates.size() - 1;
    ++version_;
    mine.waiting = mine.pushes++;
    if (mine.pushes < rounds_) receives_[slot] = unit.comm.irecv(pusher(slot), mine.pushed.holding(unit.mine));
  }

  // The fewest iterations of bucket b any pusher has pushed here.
  int everyone(size_t b) const {
    int fewest = rounds_;
    for (size_t slot = b; slot < slots_.size(); slot += k_) fewest = std::min(fewest, slots_[slot].pushes);
    return fewest;
  }

  // Answers every pull the bound allows now; returns how many.
  size_t answer() {
    const int bound = setup_.args.deployment.staleness;
    std::vector<size_t> ready;
    std::vector<int> pushed(k_);
    for (size_t b = 0; b < k_; ++b) pushed[b] = everyone(b);
    for (size_t slot = 0; slot < slots_.size(); ++slot) {
      const int round = slots_[slot].waiting;
      if (round >= 0 && (bound < 0 || pushed[slot % k_] >= round + 1 - bound)) ready.push_back(slot);
    }
    if (ready.empty()) return 0;
    comm_.label("pull", 0);
    comm_.compute(server_cpu(setup_.args.deployment, ready.size(), 0));
    for (size_t slot : ready) {
      Slot& mine = slots_[slot];
      Unit& unit = units_[slot % k_];
      if (mine.reply.active()) comm_.wait(mine.reply);
      unit.comm.label("pull", 0);
      unit.comm.set_round(mine.waiting);
      mine.reply = unit.comm.isend(pusher(slot), unit.mine);
      state_.record.updates[mine.update].reply_version = version_;
      mine.read = {version_, pushed[slot % k_]};
      mine.waiting = -1;
    }
    return ready.size();
  }

  RunState& state_;
  const RunSetup& setup_;
  const AsyncLayout layout_;
  std::shared_ptr<CommGroup> group_;
  int p_, rounds_, server_;
  size_t k_;  // buckets (1 without)
  Comm comm_;
  std::vector<Unit> units_;         // by bucket
  std::vector<Slot> slots_;
  std::vector<Request> receives_;   // by slot, as wait_some takes them
  int version_ = 0;
};

}  // namespace

void run_async_server(RunState& state, int server) {
  guarded(state, [&] { AsyncServer(state, server).run(); });
}

}  // namespace collsim
