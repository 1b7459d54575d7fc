#include "model/cost_model.hpp"

#include "algorithms/chunks.hpp"
#include "comm/buffer.hpp"

namespace collsim {

double ModelInput::bytes(size_t count) const { return static_cast<double>(simulated_bytes(count, bytes_per_elem)); }

int ceil_log2(int p) {
  int rounds = 0;
  while ((1 << rounds) < p) ++rounds;
  return rounds;
}

// All p-1 copies leave (or reach) the root together and share its link.
double model_broadcast_flat(const ModelInput& in) {
  return in.p == 1 ? 0 : in.alpha + (in.p - 1) * in.bytes(in.elems) / in.bandwidth;
}

double model_reduce_flat(const ModelInput& in) { return model_broadcast_flat(in); }

double model_broadcast_binomial(const ModelInput& in) { return ceil_log2(in.p) * in.message_time(in.elems); }

double model_reduce_binomial(const ModelInput& in) { return model_broadcast_binomial(in); }

// k segments down a chain of p-1 links: p-1 + k-1 steps; only the last step is
// paced by the (possibly shorter) last segment.
double model_broadcast_pipeline(const ModelInput& in) {
  if (in.p == 1) return 0;
  const auto segments = split_into_segments(in.elems, in.segment_elems);
  const int k = static_cast<int>(segments.size());
  const int links = in.p - 1;
  return (k + links - 2) * in.message_time(segments.front().count) + in.message_time(segments.back().count);
}

double model_allreduce_naive(const ModelInput& in) { return 2 * model_broadcast_flat(in); }

double model_allreduce_naive_binomial(const ModelInput& in) { return 2 * model_broadcast_binomial(in); }

double model_allreduce_ring(const ModelInput& in) {
  const size_t largest_chunk = (in.elems + static_cast<size_t>(in.p) - 1) / static_cast<size_t>(in.p);
  return 2 * (in.p - 1) * in.message_time(largest_chunk);
}

LowerBound lower_bound(Collective collective, const ModelInput& in) {
  if (in.p == 1) return {};
  const double n = in.bytes(in.elems);
  const double latency_term = ceil_log2(in.p) * in.alpha;
  switch (collective) {
    case Collective::allreduce: return {2.0 * (in.p - 1) / in.p * n / in.bandwidth, latency_term};
    case Collective::broadcast:
    case Collective::reduce: return {n / in.bandwidth, latency_term};
  }
  return {};
}

double busbw_factor(Collective collective, int p) {
  return collective == Collective::allreduce ? 2.0 * (p - 1) / p : 1.0;
}

}  // namespace collsim
