#pragma once
// The inputs every run starts from: deterministic in (seed, rank, element), chosen per op
// so that results stay well-conditioned (products near 1, exact integer sums).
#include <cstdint>
#include <functional>

#include "comm/buffer.hpp"
#include "comm/reduce_op.hpp"

namespace collsim {

// `first`: the carried element of the rank's vector that buf's first element is (a gradient
// bucket generated alone holds what the whole vector holds there).
void fill_input(Buffer& buf, int rank, OpKind op, uint64_t seed, size_t first = 0);

// A rank's input: fills `buf` (already sized) with what rank `rank` starts from.
using InputFn = std::function<void(int rank, Buffer& buf)>;
// Part of it: fills `buf` (shaped as the part) with the rank's input from carried element
// `first` of its vector on.
using InputAtFn = std::function<void(int rank, Buffer& buf, size_t first)>;

}  // namespace collsim
