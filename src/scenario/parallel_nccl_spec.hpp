#pragma once
// The scenario's "nccl" section in a parallel run (docs/parallelism.md): read by the
// communicators whose algorithm is NCCL's ("nccl" or an nccl-* name), checked against each.
#include <nlohmann/json.hpp>

#include "scenario/parallelism_spec.hpp"
#include "scenario/scenario.hpp"

namespace collsim {

NcclSpec parse_parallel_nccl_spec(const nlohmann::json& object, const ParallelismSpec& parallelism);

}  // namespace collsim
