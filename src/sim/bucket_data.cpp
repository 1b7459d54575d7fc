#include "sim/bucket_data.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "sim/run_state.hpp"

namespace collsim {

void BucketVerifier::deposit(size_t bucket, size_t first, int rank, Buffer result) {
  Pending& pending = pending_[bucket];
  if (pending.results.empty()) {
    pending.results.resize(static_cast<size_t>(ranks_));
    pending.left = ranks_;
  }
  pending.results[static_cast<size_t>(rank)] = std::move(result);
  if (--pending.left > 0) return;
  const Verification one = verify_results(Collective::allreduce, op_, 0, pending.results,
                                          [&](int r, Buffer& buf) { input_(r, buf, first); });
  pending_.erase(bucket);
  ++verified_;
  merge_verification(merged_, one, fmt::format("bucket {}", bucket));
}

Verification BucketVerifier::merged() const {
  Verification all = merged_;
  all.checked_ranks = ranks_;
  if (!pending_.empty() && all.verified) {
    all.verified = false;
    all.failure = fmt::format("bucket {}: {} of {} ranks never handed its result over",
                              pending_.begin()->first, pending_.begin()->second.left, ranks_);
  }
  return all;
}

Buffer rank_vector(const RunSetup& setup) {
  const Payload& payload = setup.plan->payload;
  const size_t carried = setup.plan->training.buckets_in_flight ? 0 : payload.carried_elems;
  return Buffer(setup.scenario->collective.dtype, carried, payload.logical_elems);
}

Buffer bucket_data(const RunState& state, int world, const Buffer& vector, const BucketSlice& slice) {
  if (!state.setup.plan->training.buckets_in_flight) return vector.slice(slice.offset, slice.map);
  Buffer bucket(vector.dtype(), slice.map);
  state.setup.plan->input_at(world, bucket, slice.offset);
  return bucket;
}

void bucket_done(RunState& state, int rank, int size, int round, size_t b, Buffer& vector, Buffer&& bucket) {
  const BucketSlice& slice = state.setup.plan->training.buckets[b];
  if (!state.setup.plan->training.buckets_in_flight) {
    copy_elements(vector.carried_view(slice.offset, slice.count, slice.bucket.parameters), bucket.all());
    return;
  }
  if (round + 1 < state.setup.scenario->training.rounds) return;  // verification looks at the last round
  state.setup.op->finalize(bucket.all(), size);  // (an allreduce: the whole bucket, as the whole vector's)
  state.bucket_verifier->deposit(b, slice.offset, rank, std::move(bucket));
}

}  // namespace collsim
