#pragma once
// Logical vs carried size. The network carries the logical size (say 1 GiB per rank);
// memory holds only the carried elements (so that p=4096 needs no 4 TiB of RAM). The
// algorithms split the logical elements, as if all were carried, and each message's
// simulated bytes are the logical elements it stands for times the element's size
// (comm/buffer.hpp): no simulated time depends on how many elements are carried.
#include <cstdint>
#include <optional>
#include <vector>

#include "comm/buffer.hpp"

namespace collsim {

struct Payload {
  double logical_bytes = 0;     // per rank, what the network carries
  uint64_t logical_elems = 0;   // logical_bytes / dtype size
  uint64_t carried_elems = 0;   // elements in memory per rank (over every part)
  double bytes_per_elem = 0;    // logical bytes each carried element stands for, on average
  // The vector's parts (one, or a gradient bucket each, in the order given): logical and
  // carried elements of each.
  std::vector<uint64_t> part_logical, part_carried;

  bool downscaled() const { return carried_elems != logical_elems; }
};

// Total carried elements across all ranks stay under this unless the user asks for more,
// or unless fewer would leave a chunk without an element.
constexpr uint64_t carried_budget_elements = uint64_t{1} << 22;

// Carries everything when it fits the budget. Otherwise each part gets its share of the
// budget, rounded down to a multiple of p x channels elements, and never fewer than its
// chunks need (split_evenly into p x channels: each chunk at least one element, so that
// every message carries data that verification checks). A user's count is shared among
// the parts in proportion to their sizes.
//
// `vectors_held`: whole vectors a rank holds at once beside its own (the direct allreduce
// receives one from every peer and sends its own to each: p - 1). Above 1 the budget is
// shared among them, or 64 ranks of the direct allreduce would hold 2 GiB; such an
// algorithm sends whole vectors, not chunks, so it may carry fewer than p elements.
//
// `parts`: the logical elements of each part (gradient buckets), summing to the vector's;
// empty: one part, the whole vector.
Payload plan_payload(double logical_bytes, Dtype dtype, int p, std::optional<uint64_t> carried_elements,
                     int channels = 1, double vectors_held = 1, const std::vector<uint64_t>& parts = {});

// The fewest carried elements that leave none of `chunks` even chunks of `logical`
// elements without one (all of them when a chunk has fewer than one logical element).
uint64_t carried_to_represent(uint64_t logical, uint64_t chunks);

}  // namespace collsim
