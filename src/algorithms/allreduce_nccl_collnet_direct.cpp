// NCCL's CollNetDirect allreduce (src/device/all_reduce.h, runCollNetDirect): every GPU of a
// node is a head with its own NIC; the GPUs scatter the vector's slices to their heads over
// NVLink, each head sends its node's sum to its rail's InfiniBand switch, which reduces over
// the nodes (SHARP), and gathers the result back to every GPU of its node (collnet_plan.hpp
// plans every message, collnet_rounds.hpp runs the GPUs' and the switches' sides).
#include "algorithms/algorithms.hpp"
#include "algorithms/collnet_rounds.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void allreduce_nccl_collnet_direct(Comm& comm, Buffer& buf, const CollectiveArgs& args) { run_collnet_rank(comm, buf, args, false); }

void nccl_collnet_direct_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args) { run_collnet_switch(comm, buf, args, false); }

Schedule schedule_allreduce_nccl_collnet_direct(const ModelInput& in) { return collnet_schedule(in, false); }

}  // namespace collsim
