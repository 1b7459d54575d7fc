// NCCL's NVLS allreduce (src/device/all_reduce.h): the GPUs of a node reduce in their
// NVSwitch (NVLink SHARP); each GPU sends and receives (1 + 1/g) times the vector through its
// NVLink port (nvls_plan.hpp plans every message,
// nvls_rounds.hpp runs the GPUs' and the switch's sides).
#include "algorithms/algorithms.hpp"
#include "algorithms/nvls_rounds.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void allreduce_nccl_nvls(Comm& comm, Buffer& buf, const CollectiveArgs& args) { run_nvls_rank(comm, buf, args, false); }

void nccl_nvls_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args) { run_nvls_switch(comm, buf, args, false); }

Schedule schedule_allreduce_nccl_nvls(const ModelInput& in) { return nvls_schedule(in, false); }

}  // namespace collsim
