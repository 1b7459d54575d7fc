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
  // The vector's parts (one, or a gradient bucket each, in the order given), each made of
  // pieces (a bucket's layers, in vector order): the logical and carried elements of each
  // piece, and of each part.
  std::vector<std::vector<uint64_t>> piece_logical, piece_carried;
  std::vector<uint64_t> part_logical, part_carried;

  bool downscaled() const { return carried_elems != logical_elems; }
  // Part i's layout in memory: one piece after the other.
  CarriedMap part_map(size_t i) const;
};

// Total carried elements across all ranks stay under this unless the user asks for more,
// or unless fewer would leave a chunk or a layer without an element. 1 Mi elements (4 MiB
// of float32 over all ranks) keeps the data each message copies, reduces and verifies near
// a last-level cache's size: at p = 256 a ring's message carries 16 elements, and the run
// costs 7% fewer estimated cycles than with 4 Mi (callgrind, 1 GiB ring: 6.60 -> 6.12 G,
// docs/performance.md); no time depends on it.
constexpr uint64_t carried_budget_elements = uint64_t{1} << 20;

// Carries everything when it fits the budget. Otherwise a part of one piece (the whole
// vector) gets its share of the budget rounded down to a multiple of p x channels, and
// never fewer than its chunks need (split_evenly into p x channels: each chunk at least one
// element, so that every message carries data that verification checks). A part of several
// pieces (a bucket of layers) gives each piece its share at the part's density, at least one
// element, so that every layer is represented, and a density that leaves no chunk without
// one. A user's count is shared among the parts and pieces in proportion to their sizes.
//
// `vectors_held`: whole vectors a rank holds at once beside its own (the direct allreduce
// receives one from every peer and sends its own to each: p - 1). Above 1 the budget is
// shared among them, or 64 ranks of the direct allreduce would hold 2 GiB; such an
// algorithm sends whole vectors, not chunks, so it may carry fewer than p elements.
//
// `parts`: the logical elements of each piece of each part (a bucket's layers), summing to
// the vector's; empty: one part of one piece, the whole vector.
Payload plan_payload(double logical_bytes, Dtype dtype, int p, std::optional<uint64_t> carried_elements,
                     int channels = 1, double vectors_held = 1,
                     const std::vector<std::vector<uint64_t>>& parts = {});

// The fewest carried elements that leave none of `chunks` even chunks of `logical`
// elements without one (all of them when a chunk has fewer than one logical element).
uint64_t carried_to_represent(uint64_t logical, uint64_t chunks);

}  // namespace collsim
