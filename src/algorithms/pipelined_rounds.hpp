#pragma once
// The loop of NCCL's pipelined algorithms (its tree, NVLS, NVLSTree; the switches' side too):
// a rank's messages planned in rounds (one per step it takes part in), run through NCCL's
// FIFO of `fifo` chunks per connection: the receives of round q are posted `fifo` rounds
// ahead (and the sends marked `ahead`), the sends of round q are left in flight until round
// q + fifo (the last round waits for all). The cost model follows the same rule (model/fluid.hpp, Step::fifo), so that a
// schedule that lists the same messages at the same steps prices the run exactly.
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "algorithms/model_input.hpp"
#include "comm/comm.hpp"

namespace collsim {

struct PlannedMessage {
  int peer = 0;
  bool send = false;  // else received into `view`
  View view;
  // A send of data that waits for nothing this rank receives (its own input): posted `fifo`
  // rounds early, as NCCL's FIFO lets such data run ahead (schedule.hpp, Flow::ahead).
  bool ahead = false;
  // A receive: the round (of this rank's) that waits for it, later than its own when the data is
  // used later (NCCL's warps wait for a chunk only when they use it); -1: its own round.
  int wait_round = -1;
  // A send its sender waits for in its last round, not `fifo` rounds late: a stream that runs
  // beside the rounds (a tree's bodies: nccl_trees.hpp). Its receiver waits for it in its last
  // round too (wait_round), and the model's Flow for it has a wait_steps of at_end_wait_steps.
  bool at_end = false;
};

// A Flow::wait_steps at least this marks a message both ends wait for in their last round
// (PlannedMessage::at_end; model/fluid.hpp, FluidMessage::at_end).
constexpr int at_end_wait_steps = 1 << 28;

using PlannedRounds = std::vector<std::vector<PlannedMessage>>;

// Each rank's node (its locality group's index), as the run sees them and as the model does.
std::vector<int> localities_of(const Comm& comm);
std::vector<int> localities_of(const ModelInput& in);

// The round that waits for data that arrives at some step and is used from step `wait_step` + 1
// on: the last of a rank's rounds (at `round_steps`, ascending) at or before `wait_step`.
int round_waiting(const std::vector<int>& round_steps, int wait_step);

// A side's messages in rounds (one per step it takes part in), the view each carries or
// lands in, and what to do once a round is in: (into, from) reductions, and for a switch the
// contributions whose reduction starts over from a copy (from, into) of the first.
struct PlannedSide {
  PlannedRounds rounds;
  std::vector<std::vector<std::pair<View, View>>> reductions;
  std::vector<std::vector<std::pair<View, View>>> copies;
  std::deque<Buffer> slots;  // scratch, one per part that lands there, shaped as that part
};

// Plans `messages` (by step; each with `step`, `send` and `wait`: its receiver waits for it
// that many steps after `step`) in rounds: `view_of(message, side, wait_round)` gives each
// its PlannedMessage (and may add reductions or copies after the round that waits for it).
template <typename Message, typename ViewOf>
PlannedSide plan_side(const std::vector<Message>& messages, ViewOf view_of) {
  PlannedSide side;
  std::vector<int> steps;  // each round's step
  for (const auto& m : messages)
    if (steps.empty() || steps.back() != m.step) steps.push_back(m.step);
  side.rounds.resize(steps.size());
  side.reductions.resize(steps.size());
  side.copies.resize(steps.size());
  size_t round = 0;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i > 0 && messages[i].step != messages[i - 1].step) ++round;
    const Message& m = messages[i];
    // a receive is waited for (and reduced) in the round before the step that uses it
    const int wait = m.send ? static_cast<int>(round) : round_waiting(steps, m.step + m.wait);
    PlannedMessage planned = view_of(m, side, static_cast<size_t>(wait));
    if (!m.send) planned.wait_round = wait;
    side.rounds[round].push_back(planned);
  }
  return side;
}

// A receive reduced into `into` after round `wait` (a partial sum; for a switch a contribution,
// the `first` copied into its sum, the others added): the scratch slot it lands in.
View land_for_reduction(PlannedSide& side, const Buffer& shape, const View& into, size_t wait, bool first = false);

class ReduceOp;
// Runs a side's rounds; after each, its copies, then its reductions with `op`.
void run_side(Comm& comm, const PlannedSide& side, int fifo, const char* phase, const ReduceOp& op);

// Runs the rounds; `after_round(q)` runs once the receives round q waits for (and the sends `fifo`
// rounds back) are done, before round q + 1 posts its sends: the reductions of what came in.
void run_pipelined(Comm& comm, const PlannedRounds& rounds, int fifo, const char* phase,
                   const std::function<void(int)>& after_round);

}  // namespace collsim
