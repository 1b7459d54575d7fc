#pragma once
// An algorithm's schedule as the cost model sees it: steps of messages (flows) that travel
// at once, each step starting when the steps it depends on have ended. Every algorithm
// describes its own schedule in one function beside it (schedule_allreduce_ring in
// allreduce_ring.cpp, ...); the cost model (contention.hpp) then prices the schedule on a
// network: the contention-free star of the closed-form formulas, or the platform's routes.
//
// Adding an algorithm's model is one function: build its steps with Schedule::step() and
// Step::send(), chain them (by default each step follows the previous one) and register it
// (AlgorithmInfo::schedule).
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace collsim {

struct Flow {
  int src = 0, dst = 0;  // ranks
  double bytes = 0;      // simulated bytes
  int order = 0;         // the sender's order-th message of the step: it leaves after order+1 overheads
  // Pipelined (Step::fifo): data that waits for nothing the sender receives (its own input),
  // which its sender posts `fifo` of its steps early, as far as NCCL's FIFO lets it run ahead.
  bool ahead = false;
  // Pipelined: its receiver waits for it this many steps after the step that carries it (in
  // its last round at or before that step), as NCCL's warps wait for data only when they use
  // it; 0: in that step.
  int wait_steps = 0;
  bool operator==(const Flow&) const = default;
};

struct Step {
  std::vector<Flow> flows;
  int repeat = 1;              // the step runs this many times in a row (identical patterns priced once)
  std::vector<int> after;      // the steps it waits for (indices of earlier steps); empty: starts at 0
  // The receivers reduce what they receive, once it has arrived: the step lasts the most
  // bytes one rank receives / ModelInput::reduce_bandwidth longer (nothing when free).
  bool reduced = false;
  // Seconds the step lasts beyond its messages and reductions: a parameter server's CPU
  // handling what it received or sends (in lock step only; 0: none).
  double busy = 0;
  // NCCL's FIFO of this many slots (rank-by-rank schedules; 0: none): the receivers post
  // their receives of the step that many of their steps early, the senders wait for their
  // messages that many steps late (model/fluid.hpp), as the algorithm's code does.
  int fifo = 0;

  // A message from src to dst; a sender's messages of one step leave one overhead apart,
  // in the order they are added.
  Step& send(int src, int dst, double bytes);
  // A message whose sender posts it `fifo` steps early (Flow::ahead).
  Step& send_ahead(int src, int dst, double bytes);

private:
  std::vector<int> sent_;  // messages added so far per sender
};

// A schedule whose ranks move on step by step on their own (Schedule::mark_rank_by_rank)
// is followed message by message by the model up to this many messages; beyond, its steps
// are priced in lock step (its estimate note says so; model/contention.hpp).
constexpr size_t max_followed_messages = 200000;

// The most messages the schedules built on this thread may describe while a FlowBudget
// lives (the model's own limit: a schedule of p^2 messages at p = 131,072 would fill any
// memory before it could be priced); Step::send throws ScheduleTooLarge beyond it.
class FlowBudget {
public:
  explicit FlowBudget(size_t most);
  ~FlowBudget();
  FlowBudget(const FlowBudget&) = delete;
  FlowBudget& operator=(const FlowBudget&) = delete;

private:
  size_t most_before_, used_before_;
};
struct ScheduleTooLarge {
  size_t most = 0;  // the budget it went beyond
};

class Schedule {
public:
  // A new step after the last one added (the first starts at 0).
  Step& step(int repeat = 1);
  // A new step after these steps (none: it starts at 0).
  Step& step_after(std::vector<int> after, int repeat = 1);
  // The index of the last step added (-1 when there is none).
  int last() const { return static_cast<int>(steps_.size()) - 1; }
  // Merges the last step into the one before when it only follows it and carries the same
  // messages: one step with a longer repeat (long runs of identical steps stay small).
  // Returns whether it merged.
  bool merge_last_if_repeated();
  // For a schedule priced in lock step only (more than max_followed_messages): merges the
  // last step into the one two before when it carries the same messages, as the even and
  // odd steps of a pipeline alternate. The steps' order changes, not their sum in lock step.
  // Returns whether it merged.
  bool merge_last_if_alternating();
  // One more run of step `index`: what adding a copy of it and merging it into it gives,
  // without building the copy (the FlowBudget counts its messages while it would exist).
  void repeat_step(int index);
  // Appends another schedule after this one (its first steps wait for all of this one's).
  void then(const Schedule& next);

  const std::vector<Step>& steps() const { return steps_; }

  // Each rank moves on to its next step as soon as its own messages of the step are done
  // (pipelined and hierarchical schedules: no rank waits for a step it takes no part in).
  // The model then follows the ranks message by message instead of pricing each step in
  // lock step, and `after` is not used: a rank's steps follow one another in index order.
  void mark_rank_by_rank() { rank_by_rank_ = true; }
  bool rank_by_rank() const { return rank_by_rank_; }

  // Why pricing the steps in lock step is only an estimate for this schedule (empty: it is
  // what SimGrid computes on the ideal network).
  void mark_estimate(std::string why) { estimate_note_ = std::move(why); }
  const std::string& estimate_note() const { return estimate_note_; }

private:
  std::vector<Step> steps_;
  std::string estimate_note_;
  bool rank_by_rank_ = false;
};

}  // namespace collsim
