#pragma once
// Logical vs carried size. The network carries the logical size (say 1 GiB per rank);
// memory holds only the carried elements (so that p=4096 needs no 4 TiB of RAM). Each
// message's simulated bytes are its carried elements times bytes_per_elem.
#include <cstdint>
#include <optional>

#include "comm/buffer.hpp"

namespace collsim {

struct Payload {
  double logical_bytes = 0;     // per rank, what the network carries
  uint64_t logical_elems = 0;   // logical_bytes / dtype size
  uint64_t carried_elems = 0;   // elements in memory per rank
  double bytes_per_elem = 0;    // logical bytes each carried element stands for

  bool downscaled() const { return carried_elems != logical_elems; }
};

// Total carried elements across all ranks stay under this unless the user asks for more.
constexpr uint64_t carried_budget_elements = uint64_t{1} << 22;

// Carries everything when it fits the budget; otherwise a multiple of p x channels
// elements, so that every ring chunk stands for exactly logical_bytes / p (with k channels,
// logical_bytes / (kp): every channel's slice and chunk equal).
//
// `vectors_held`: whole vectors a rank holds at once beside its own (the direct allreduce
// receives one from every peer and sends its own to each: p - 1). Above 1 the budget is
// shared among them, or 64 ranks of the direct allreduce would hold 2 GiB; such an
// algorithm sends whole vectors, not chunks, so it may carry fewer than p elements.
Payload plan_payload(double logical_bytes, Dtype dtype, int p, std::optional<uint64_t> carried_elements,
                     int channels = 1, double vectors_held = 1);

}  // namespace collsim
