#pragma once
// What every algorithm receives besides its Comm and Buffer, and the collectives it serves.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "comm/comm.hpp"
#include "comm/reduce_op.hpp"

namespace collsim {

enum class Collective { allreduce, broadcast, reduce };

std::string_view collective_name(Collective collective);
Collective parse_collective(std::string_view name, std::string_view field);
std::vector<std::string> collective_names();

struct CollectiveArgs {
  const ReduceOp* op = nullptr;  // unused by broadcast
  int root = 0;                  // broadcast and reduce (and naive allreduce's meeting point)
  size_t segment_elems = 1;      // pipelined algorithms: elements per segment
};

// The root inside a group of `size` ranks: the scenario's root, or rank 0 once a rebuilt
// group is too small to have it.
inline int root_in_group(int root, int size) { return root < size ? root : 0; }

using AlgorithmFn = void (*)(Comm& comm, Buffer& buf, const CollectiveArgs& args);

}  // namespace collsim
