#include "plan/payload.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace collsim {

uint64_t carried_to_represent(uint64_t logical, uint64_t chunks) {
  const uint64_t smallest = chunks == 0 ? logical : logical / chunks;
  if (smallest == 0) return logical;
  // A span of m logical elements holds at least one carried element when m >= logical / carried.
  return std::min(logical, (logical + smallest - 1) / smallest);
}

namespace {

// A part of one piece (the whole vector): its share of the budget, rounded down to a
// multiple of the chunks and never fewer than they need.
uint64_t carried_for_part(uint64_t logical, double share, uint64_t chunks, bool whole_vectors) {
  if (whole_vectors) return std::min(logical, std::max<uint64_t>(1, static_cast<uint64_t>(share)));
  const uint64_t per_chunk = std::max<uint64_t>(1, static_cast<uint64_t>(share / static_cast<double>(chunks)));
  // (per_chunk * chunks may pass 2^64 only when logical is smaller anyway)
  const uint64_t multiple = per_chunk > logical / chunks + 1 ? logical : per_chunk * chunks;
  return std::min(logical, std::max(multiple, carried_to_represent(logical, chunks)));
}

// A part of several pieces (a bucket's layers): each piece at least one element and at the
// part's density, which is its share of the budget and, unless it sends whole vectors, at
// least 2 per smallest chunk m: a chunk that holds no whole piece overlaps at most two, one
// over at least m / 2 elements, which then holds at least one carried element.
std::vector<uint64_t> carried_for_pieces(const std::vector<uint64_t>& pieces, double budget_density, uint64_t chunks,
                                         bool whole_vectors) {
  const uint64_t logical = std::accumulate(pieces.begin(), pieces.end(), uint64_t{0});
  const uint64_t smallest_chunk = logical / chunks;
  if (!whole_vectors && smallest_chunk == 0) return pieces;  // chunks under one element: carry it all
  const double density =
      whole_vectors ? budget_density : std::max(budget_density, 2.0 / static_cast<double>(smallest_chunk));
  std::vector<uint64_t> carried;
  for (uint64_t piece : pieces) {
    const double wanted = std::ceil(static_cast<double>(piece) * density);
    carried.push_back(std::min(piece, std::max<uint64_t>(1, static_cast<uint64_t>(std::min(wanted, 1e18)))));
  }
  return carried;
}

// `total` shared among `sizes` in proportion (the cumulative split: the shares add up).
std::vector<uint64_t> share_out(const std::vector<uint64_t>& sizes, uint64_t total) {
  const uint64_t whole = std::accumulate(sizes.begin(), sizes.end(), uint64_t{0});
  std::vector<uint64_t> shares;
  uint64_t before = 0, done = 0;
  for (uint64_t size : sizes) {
    before += size;
    const auto upto = whole == 0 ? 0 : static_cast<uint64_t>(static_cast<unsigned __int128>(before) * total / whole);
    shares.push_back(upto - done);
    done = upto;
  }
  return shares;
}

// The carried elements of every piece when the budget cannot carry everything.
std::vector<std::vector<uint64_t>> downscale(const Payload& payload, double per_rank_budget, uint64_t chunks,
                                             bool whole_vectors) {
  const auto logical = static_cast<double>(payload.logical_elems);
  std::vector<std::vector<uint64_t>> carried;
  for (size_t i = 0; i < payload.piece_logical.size(); ++i) {
    const std::vector<uint64_t>& pieces = payload.piece_logical[i];
    const double share = per_rank_budget * static_cast<double>(payload.part_logical[i]) / logical;
    if (pieces.size() == 1) carried.push_back({carried_for_part(pieces[0], share, chunks, whole_vectors)});
    else carried.push_back(carried_for_pieces(pieces, per_rank_budget / logical, chunks, whole_vectors));
  }
  return carried;
}

}  // namespace

CarriedMap Payload::part_map(size_t i) const {
  CarriedMap map{part_carried[i], part_logical[i], nullptr};
  if (piece_logical[i].size() > 1) {
    auto starts = std::make_shared<std::vector<CarriedMap::Start>>();
    CarriedMap::Start at;
    for (size_t j = 0; j < piece_logical[i].size(); ++j) {
      starts->push_back(at);
      at.logical += piece_logical[i][j];
      at.carried += piece_carried[i][j];
    }
    map.pieces = std::move(starts);
  }
  return map;
}

Payload plan_payload(double logical_bytes, Dtype dtype, int p, std::optional<uint64_t> carried_elements,
                     int channels, double vectors_held, const std::vector<std::vector<uint64_t>>& parts) {
  Payload payload;
  payload.logical_bytes = logical_bytes;
  payload.logical_elems = static_cast<uint64_t>(logical_bytes / static_cast<double>(dtype_size(dtype)));
  payload.piece_logical = parts.empty() ? std::vector<std::vector<uint64_t>>{{payload.logical_elems}} : parts;
  for (const auto& pieces : payload.piece_logical)
    payload.part_logical.push_back(std::accumulate(pieces.begin(), pieces.end(), uint64_t{0}));
  const uint64_t logical = payload.logical_elems;
  const auto ranks = static_cast<uint64_t>(p);
  // (budget / ranks first: the product could overflow)
  const double per_rank_budget =
      static_cast<double>(carried_budget_elements / ranks) / std::max(1.0, vectors_held);
  if (carried_elements) {
    const auto shares = share_out(payload.part_logical, std::min(*carried_elements, logical));
    for (size_t i = 0; i < shares.size(); ++i) payload.piece_carried.push_back(share_out(payload.piece_logical[i], shares[i]));
  } else if (static_cast<double>(logical) <= per_rank_budget) {
    payload.piece_carried = payload.piece_logical;
  } else {
    const uint64_t chunks = ranks * static_cast<uint64_t>(std::max(1, channels));
    payload.piece_carried = downscale(payload, per_rank_budget, chunks, vectors_held > 1);
  }
  for (const auto& pieces : payload.piece_carried) {
    payload.part_carried.push_back(std::accumulate(pieces.begin(), pieces.end(), uint64_t{0}));
    payload.carried_elems += payload.part_carried.back();
  }
  payload.bytes_per_elem = payload.carried_elems == 0 ? 0 : logical_bytes / static_cast<double>(payload.carried_elems);
  return payload;
}

}  // namespace collsim
