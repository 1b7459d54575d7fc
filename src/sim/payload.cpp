#include "sim/payload.hpp"

#include <algorithm>

namespace collsim {

uint64_t carried_to_represent(uint64_t logical, uint64_t chunks) {
  const uint64_t smallest = chunks == 0 ? logical : logical / chunks;
  if (smallest == 0) return logical;
  // A span of m logical elements holds at least one carried element when m >= logical / carried.
  return std::min(logical, (logical + smallest - 1) / smallest);
}

namespace {

// The carried elements of one part of `logical` elements out of a budget `share` (what the
// part may hold), when the budget cannot carry everything.
uint64_t carried_for_part(uint64_t logical, double share, uint64_t chunks, bool whole_vectors) {
  if (whole_vectors) return std::min(logical, std::max<uint64_t>(1, static_cast<uint64_t>(share)));
  const uint64_t per_chunk = std::max<uint64_t>(1, static_cast<uint64_t>(share / static_cast<double>(chunks)));
  // (per_chunk * chunks may pass 2^64 only when logical is smaller anyway)
  const uint64_t multiple = per_chunk > logical / chunks + 1 ? logical : per_chunk * chunks;
  return std::min(logical, std::max(multiple, carried_to_represent(logical, chunks)));
}

// A user's count shared among the parts in proportion to their logical sizes (the
// cumulative split: the counts add up to `total`).
std::vector<uint64_t> share_out(const std::vector<uint64_t>& parts, uint64_t logical, uint64_t total) {
  std::vector<uint64_t> carried;
  uint64_t before = 0, done = 0;
  for (uint64_t part : parts) {
    before += part;
    const auto upto = static_cast<uint64_t>(static_cast<unsigned __int128>(before) * total / logical);
    carried.push_back(upto - done);
    done = upto;
  }
  return carried;
}

}  // namespace

Payload plan_payload(double logical_bytes, Dtype dtype, int p, std::optional<uint64_t> carried_elements,
                     int channels, double vectors_held, const std::vector<uint64_t>& parts) {
  Payload payload;
  payload.logical_bytes = logical_bytes;
  payload.logical_elems = static_cast<uint64_t>(logical_bytes / static_cast<double>(dtype_size(dtype)));
  payload.part_logical = parts.empty() ? std::vector<uint64_t>{payload.logical_elems} : parts;
  const uint64_t logical = payload.logical_elems;
  const auto ranks = static_cast<uint64_t>(p);
  // (budget / ranks first: the product could overflow)
  const double per_rank_budget =
      static_cast<double>(carried_budget_elements / ranks) / std::max(1.0, vectors_held);
  if (carried_elements) {
    payload.part_carried = share_out(payload.part_logical, logical, std::min(*carried_elements, logical));
  } else if (static_cast<double>(logical) <= per_rank_budget) {
    payload.part_carried = payload.part_logical;
  } else {
    const uint64_t chunks = ranks * static_cast<uint64_t>(std::max(1, channels));
    for (uint64_t part : payload.part_logical)
      payload.part_carried.push_back(carried_for_part(
          part, per_rank_budget * static_cast<double>(part) / static_cast<double>(logical), chunks, vectors_held > 1));
  }
  for (uint64_t carried : payload.part_carried) payload.carried_elems += carried;
  payload.bytes_per_elem = payload.carried_elems == 0 ? 0 : logical_bytes / static_cast<double>(payload.carried_elems);
  return payload;
}

}  // namespace collsim
