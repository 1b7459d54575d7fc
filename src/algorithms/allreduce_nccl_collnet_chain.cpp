// NCCL's CollNetChain allreduce (src/device/all_reduce.h, runCollNetChain): on each channel a
// chain through the GPUs of each node reduces up to its head, which sends the node's sum to its
// rail's InfiniBand switch; the switch reduces over the nodes (SHARP) and the result passes
// back down the chain (collnet_plan.hpp plans every message, collnet_rounds.hpp runs the GPUs'
// and the switches' sides).
#include "algorithms/algorithms.hpp"
#include "algorithms/collnet_rounds.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void allreduce_nccl_collnet_chain(Comm& comm, Buffer& buf, const CollectiveArgs& args) { run_collnet_rank(comm, buf, args, true); }

void nccl_collnet_chain_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args) { run_collnet_switch(comm, buf, args, true); }

Schedule schedule_allreduce_nccl_collnet_chain(const ModelInput& in) { return collnet_schedule(in, true); }

}  // namespace collsim
