#pragma once
// The two sides of NCCL's CollNetDirect and CollNetChain (collnet_plan.hpp) as pipelined
// rounds: a GPU's, and its rail's SHARP switch's, which reduces the nodes' contributions in
// the switch; and their schedule for the cost model.
#include "algorithms/collective.hpp"
#include "algorithms/model_input.hpp"
#include "algorithms/schedule.hpp"

namespace collsim {

// A GPU's part; `chain`: CollNetChain (on args.channels lanes), else CollNetDirect.
void run_collnet_rank(Comm& comm, Buffer& buf, const CollectiveArgs& args, bool chain);
// A rail switch's part (comm's rank is the switch: comm.size() + s, serving GPU s of every node).
void run_collnet_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args, bool chain);
// Every message of the GPUs and of the switches (schedule rank p + s for rail s's switch).
Schedule collnet_schedule(const ModelInput& in, bool chain);

}  // namespace collsim
