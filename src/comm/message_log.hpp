#pragma once
// The messages of a run, as the receivers saw them complete. What they add up to is kept
// as each one arrives: per step and per rank here, per link in sim/link_usage (a
// MessageObserver), so that memory does not grow with the number of messages. Single
// messages go to a bounded store (the first `limit` of the run) for the pictures that draw
// them: timeline arrows, the step-through, Perfetto flows.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <unordered_map>
#include <vector>

namespace collsim {

struct MessageRecord {
  int src = 0;              // world rank of the sender
  int dst = 0;              // world rank of the receiver
  uint64_t bytes = 0;       // simulated (logical) bytes on the wire
  double start = 0;         // transfer start: both sides posted (SimGrid's rendezvous)
  double end = 0;           // the receiver got the data
  int step = 0;             // algorithm step, as labelled by the sender
  const char* phase = "";   // algorithm phase ("reduce-scatter", ...), a string literal
  int epoch = 0;            // group generation
  int round = 0;            // training round of the sender
  int64_t first = -1;       // first element carried, in the collective's buffer (-1: not from it)
  uint64_t elements = 0;    // elements carried (carried, not logical: see payload in the trace)
  int bucket = -1;          // layered training: the gradient bucket whose collective sent it (-1: none)
};

// The messages of one (round, epoch, phase, step, bucket).
struct StepTotals {
  int round = 0, epoch = 0, step = 0;
  const char* phase = "";
  uint64_t count = 0, bytes = 0;
  double start = 0, end = 0;  // first start, last end
  int bucket = -1;
};

// What one world rank sent and received.
struct RankTotals {
  uint64_t sent = 0, received = 0, bytes_sent = 0, bytes_received = 0;
};

// What an observer kept of one captured collective's messages (MessageLog::begin_capture).
struct ObservedCapture {
  virtual ~ObservedCapture() = default;
};

// Sees each message as it is recorded (sim/link_usage follows the links with it).
class MessageObserver {
public:
  virtual ~MessageObserver() = default;
  // `settled`: no message recorded later can start before this time.
  virtual void on_message(const MessageRecord& record, double settled) = 0;
  // A collective alone on the network from `now` on: what its messages add is followed
  // apart as well, until end_capture. `settled`, here too: every message that starts
  // before it has been recorded (just after now when nothing is in flight).
  virtual void begin_capture(double /*now*/, double /*settled*/) {}
  virtual std::unique_ptr<ObservedCapture> end_capture(double /*now*/, double /*settled*/) { return nullptr; }
  // What a capture added, added again `shift` seconds later.
  virtual void replay(const ObservedCapture& /*captured*/, double /*shift*/, double /*settled*/) {}
  // A transfer from `src` to `dst` (world ranks) abandoned by a verdict: on its route from
  // `start` until it was cancelled at `end`, but never delivered (no message of the log).
  virtual void on_abandoned(int /*src*/, int /*dst*/, double /*start*/, double /*end*/) {}
};

// What the messages of one collective added to the log (MessageLog::begin_capture), to add
// again for an identical collective at another time (sim/replay.hpp): memory grows with
// its steps, ranks and links, not with its messages.
struct LogCapture {
  bool alone = true;                 // nothing in flight at either end; no message of it in an earlier step
  double start = 0, end = 0;         // begin_capture's and end_capture's clocks
  uint64_t count = 0;
  std::vector<MessageRecord> head;   // its first messages, as many as the store could want
  std::vector<StepTotals> steps;     // its steps, as recorded
  std::vector<RankTotals> ranks;     // by world rank
  std::unique_ptr<ObservedCapture> observed;
};

// Where a replayed collective's messages go: `shift` seconds after the captured ones, into
// `round` and `bucket`, their elements `moved` further in the vector (or, not `elements_known`,
// unknown: -1).
struct ReplayMove {
  double shift = 0;
  int round = 0, bucket = -1;
  int64_t moved = 0;
  bool elements_known = true;
};

// How many single messages the store keeps (--messages).
constexpr uint64_t keep_every_message = std::numeric_limits<uint64_t>::max();
constexpr uint64_t default_kept_messages = 20000;

class MessageLog {
public:
  void set_limit(uint64_t limit) { limit_ = limit; }
  void observe(MessageObserver* observer) { observer_ = observer; }
  // From `now`, when nothing is in flight, until end_capture (nothing in flight again): what
  // the messages add is kept apart as well, for replay(). One capture at a time.
  void begin_capture(double now);
  bool capturing() const { return capturing_; }
  LogCapture end_capture(double now);
  // Adds what `captured` added again, moved (its single messages as far as the store wants).
  void replay(const LogCapture& captured, const ReplayMove& move, double now);

  // A sender posts a message at `time`; the ticket goes with it to add(). Messages still
  // on their way hold back what observers may treat as settled.
  uint64_t post(double time);
  // The receiver got the message of `ticket`; `now` is the simulated clock.
  void add(const MessageRecord& record, uint64_t ticket, double now);
  // A transfer cancelled before delivery (MessageObserver::on_abandoned).
  void abandoned(int src, int dst, double start, double end) {
    if (observer_ != nullptr) observer_->on_abandoned(src, dst, start, end);
  }

  uint64_t count() const { return count_; }
  uint64_t limit() const { return limit_; }
  // The first min(count, limit) messages, in the order they were recorded.
  const std::vector<MessageRecord>& kept() const { return kept_; }
  bool kept_all() const { return kept_.size() == count_; }
  // One entry per (round, epoch, phase, step, bucket), in order of first start (ties: by
  // round, epoch, phase name, step, bucket).
  std::vector<StepTotals> steps() const;
  // By world rank, up to the highest rank that sent or received.
  const std::vector<RankTotals>& ranks() const { return ranks_; }

private:
  struct StepKey {
    int round, epoch, phase, step, bucket;
    bool operator==(const StepKey&) const = default;
  };
  struct StepKeyHash {
    size_t operator()(const StepKey& k) const;
  };
  int phase_id(const char* phase);
  double settled_after(double now) const;
  StepTotals& step_of(const MessageRecord& record);

  uint64_t limit_ = default_kept_messages;
  uint64_t count_ = 0;
  std::vector<MessageRecord> kept_;
  std::vector<const char*> phases_;  // distinct phase names; a step's phase is an index here
  std::vector<StepTotals> steps_;
  std::unordered_map<StepKey, uint32_t, StepKeyHash> step_index_;
  StepKey last_key_{-1, -1, -1, -1, -1};
  uint32_t last_step_ = 0;
  std::vector<RankTotals> ranks_;
  // Posted times of the messages since the oldest one not yet recorded (done: -1).
  std::deque<double> open_;
  uint64_t first_open_ = 0;  // ticket of open_.front()
  MessageObserver* observer_ = nullptr;
  // The capture under way: the step and rank totals before it, its first messages.
  bool capturing_ = false;
  LogCapture capture_;
  size_t capture_steps_ = 0;
  std::vector<RankTotals> capture_ranks_;
};

}  // namespace collsim
