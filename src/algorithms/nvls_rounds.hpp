#pragma once
// The two sides of NCCL's NVLS and NVLSTree (nvls_plan.hpp) as pipelined rounds: a GPU's,
// and its node's NVSwitch's, which reduces the node's contributions in the switch; and their
// schedule for the cost model. nccl-nvls and nccl-nvls-tree are these with the tree off or on.
#include "algorithms/collective.hpp"
#include "algorithms/model_input.hpp"
#include "algorithms/nvls_plan.hpp"
#include "algorithms/schedule.hpp"

namespace collsim {

// A GPU's part; `tree`: NVLSTree across nodes (`across`: a ring there too, hierarchical's level).
void run_nvls_rank(Comm& comm, Buffer& buf, const CollectiveArgs& args, bool tree);
void run_nvls_rank(Comm& comm, Buffer& buf, const CollectiveArgs& args, NvlsAcross across);
// The NVSwitch's part (comm's rank is the switch: comm.size() + s).
void run_nvls_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args, bool tree);
void run_nvls_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args, NvlsAcross across);
// Every message of the GPUs and of the switches (schedule ranks p + n for node n's switch).
Schedule nvls_schedule(const ModelInput& in, bool tree);
Schedule nvls_schedule(const ModelInput& in, NvlsAcross across);

}  // namespace collsim
