#pragma once
// The inputs every run starts from: deterministic in (seed, rank, element), chosen per op
// so that results stay well-conditioned (products near 1, exact integer sums).
#include <cstdint>
#include <functional>

#include "comm/buffer.hpp"
#include "comm/reduce_op.hpp"

namespace collsim {

void fill_input(Buffer& buf, int rank, OpKind op, uint64_t seed);

// A rank's input: fills `buf` (already sized) with what rank `rank` starts from.
using InputFn = std::function<void(int rank, Buffer& buf)>;

}  // namespace collsim
