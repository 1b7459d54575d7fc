#pragma once
// The loop of NCCL's pipelined algorithms (its tree, NVLS, NVLSTree; the switches' side too):
// a rank's messages planned in rounds (one per step it takes part in), run through NCCL's
// FIFO of `fifo` chunks per connection: the receives of round q are posted `fifo` rounds
// ahead (and the sends marked `ahead`), the sends of round q are left in flight until round
// q + fifo (the last round waits for all). The cost model follows the same rule (model/fluid.hpp, Step::fifo), so that a
// schedule that lists the same messages at the same steps prices the run exactly.
#include <functional>
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
};

using PlannedRounds = std::vector<std::vector<PlannedMessage>>;

// Each rank's node (its locality group's index), as the run sees them and as the model does.
std::vector<int> localities_of(const Comm& comm);
std::vector<int> localities_of(const ModelInput& in);

// The round that waits for data that arrives at some step and is used from step `wait_step` + 1
// on: the last of a rank's rounds (at `round_steps`, ascending) at or before `wait_step`.
int round_waiting(const std::vector<int>& round_steps, int wait_step);

// Runs the rounds; `after_round(q)` runs once the receives round q waits for (and the sends `fifo`
// rounds back) are done, before round q + 1 posts its sends: the reductions of what came in.
void run_pipelined(Comm& comm, const PlannedRounds& rounds, int fifo, const char* phase,
                   const std::function<void(int)>& after_round);

}  // namespace collsim
