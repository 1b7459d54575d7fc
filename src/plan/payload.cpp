#include "plan/payload.hpp"

#include <algorithm>

namespace collsim {

Payload plan_payload(double logical_bytes, Dtype dtype, int p, std::optional<uint64_t> carried_elements,
                     int channels, double vectors_held) {
  Payload payload;
  payload.logical_bytes = logical_bytes;
  payload.logical_elems = static_cast<uint64_t>(logical_bytes / static_cast<double>(dtype_size(dtype)));
  const auto ranks = static_cast<uint64_t>(p);
  // (budget / ranks first: the product could overflow)
  const auto per_rank_budget =
      static_cast<uint64_t>(static_cast<double>(carried_budget_elements / ranks) / std::max(1.0, vectors_held));
  if (carried_elements) {
    payload.carried_elems = std::min(*carried_elements, payload.logical_elems);
  } else if (payload.logical_elems <= per_rank_budget) {
    payload.carried_elems = payload.logical_elems;
  } else if (vectors_held > 1) {
    payload.carried_elems = std::max<uint64_t>(1, per_rank_budget);
  } else {
    const uint64_t chunks = ranks * static_cast<uint64_t>(std::max(1, channels));
    const uint64_t per_chunk = std::max<uint64_t>(1, carried_budget_elements / ranks / chunks);
    payload.carried_elems = std::min(payload.logical_elems, per_chunk * chunks);
  }
  payload.bytes_per_elem = logical_bytes / static_cast<double>(payload.carried_elems);
  return payload;
}

}  // namespace collsim
