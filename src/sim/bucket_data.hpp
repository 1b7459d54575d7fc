#pragma once
// A gradient bucket's data for one collective (sim/worker.cpp). With whole vectors, a copy
// of the bucket's part of the rank's vector, copied back at the end. With buckets in flight
// (TrainingPlan::buckets_in_flight: 1,024 ranks x 534 buckets x 8,192 chunks would need
// about 25 GiB of whole vectors), the rank holds no vector: a bucket is made from the rank's
// inputs when its collective starts (the elements the whole vector holds there), and at the
// end of the last round its result is finalized and handed to the BucketVerifier, which
// checks the bucket against the rank-order reduction once every rank has handed its result
// over and then drops it. Memory holds only the buckets some rank still works on.
#include <cstddef>
#include <map>
#include <vector>

#include "comm/buffer.hpp"
#include "plan/input_data.hpp"
#include "sim/verify.hpp"

namespace collsim {

struct BucketSlice;
struct RunSetup;
struct RunState;

class BucketVerifier {
public:
  BucketVerifier(int ranks, OpKind op, InputAtFn input) : ranks_(ranks), op_(op), input_(std::move(input)) {}
  // Rank `rank`'s result of bucket `bucket`, whose carried elements begin at `first` of the vector.
  void deposit(size_t bucket, size_t first, int rank, Buffer result);
  // Every bucket's check merged (checked_ranks: the ranks); a bucket some rank never handed
  // over fails it.
  Verification merged() const;

private:
  struct Pending {
    std::vector<Buffer> results;
    int left = 0;
  };
  int ranks_;
  OpKind op_;
  InputAtFn input_;
  std::map<size_t, Pending> pending_;
  Verification merged_;
  size_t verified_ = 0;
};

// A rank's vector: every bucket's carried elements, or none when buckets are in flight.
Buffer rank_vector(const RunSetup& setup);
// The data bucket `slice`'s collective starts from on rank `world`: `vector`'s part, or
// (buckets in flight) the rank's input there.
Buffer bucket_data(const RunState& state, int world, const Buffer& vector, const BucketSlice& slice);
// After bucket b's collective: back into `vector`, or (buckets in flight, last round)
// finalized and handed to the verifier as rank `rank` of `size`.
void bucket_done(RunState& state, int rank, int size, int round, size_t b, Buffer& vector, Buffer&& bucket);

}  // namespace collsim
