// NCCL's NVLSTree allreduce (src/device/all_reduce.h): the GPUs of a node reduce in their
// NVSwitch (NVLink SHARP), GPU i of every node runs NCCL's double binary tree
// over the nodes on slice i, and the switch multicasts the result (nvls_plan.hpp plans every message,
// nvls_rounds.hpp runs the GPUs' and the switch's sides).
#include "algorithms/algorithms.hpp"
#include "algorithms/nvls_rounds.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void allreduce_nccl_nvls_tree(Comm& comm, Buffer& buf, const CollectiveArgs& args) { run_nvls_rank(comm, buf, args, true); }

void nccl_nvls_tree_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args) { run_nvls_switch(comm, buf, args, true); }

Schedule schedule_allreduce_nccl_nvls_tree(const ModelInput& in) { return nvls_schedule(in, true); }

}  // namespace collsim
