#include "model/cost_model.hpp"

#include <algorithm>
#include <stdexcept>

#include "algorithms/chunks.hpp"
#include "algorithms/hierarchy.hpp"
#include "comm/buffer.hpp"

namespace collsim {

double ModelInput::bytes(size_t count) const { return static_cast<double>(simulated_bytes(count, bytes_per_elem)); }

int ceil_log2(int p) {
  int rounds = 0;
  while ((int64_t{1} << rounds) < p) ++rounds;  // 64 bits: no overflow for any int p
  return rounds;
}

namespace {

// The largest of the messages that carry `width` consecutive blocks, aligned on multiples
// of width (the partner windows of recursive halving and doubling).
size_t largest_window(const std::vector<Chunk>& blocks, int width) {
  size_t largest = 0;
  for (int first = 0; first < static_cast<int>(blocks.size()); first += width)
    largest = std::max(largest, span_of(blocks, first, width).count);
  return largest;
}

size_t largest_chunk(size_t elems, int p) { return (elems + static_cast<size_t>(p) - 1) / static_cast<size_t>(p); }

// The time of the steps of recursive halving (or doubling: the same windows in the other
// order) among the pof2 ranks left by the fold, each step paced by its largest message.
double halving_steps(const ModelInput& in, const PowerOfTwoFold& fold, const std::vector<Chunk>& blocks) {
  double time = 0;
  for (int width = fold.pof2 / 2; width > 0; width /= 2) time += in.message_time(largest_window(blocks, width));
  return time;
}

// Two phases of schedule.steps() steps, each paced by the largest segment; with one edge
// (p = 2) the segments simply stream, one per step.
double tree_phases(const ModelInput& in, const TreeSchedule& schedule,
                   const std::vector<std::vector<Chunk>>& segments) {
  std::vector<size_t> counts;
  size_t largest = 0, most = 0;
  for (const auto& s : segments) {
    counts.push_back(s.size());
    most = std::max(most, s.size());
    largest = std::max(largest, s.front().count);
  }
  const int steps = in.p == 2 ? static_cast<int>(most) : schedule.steps(counts);
  return 2 * steps * in.message_time(largest);
}

}  // namespace

namespace {

// One rank posts p-1 messages of `count` elements: the k-th leaves after k overheads and
// they share the sender's link. The link never idles once the first is through its
// latency, so the last byte is out at max over k of (k o + alpha + (p-k) bytes/B): the
// overheads or the bytes dominate (without overhead: alpha + (p-1) bytes/B).
double fan_out_time(const ModelInput& in, size_t count) {
  const double b = in.bytes(count) / in.bandwidth;
  return in.alpha + std::max(in.overhead + (in.p - 1) * b, (in.p - 1) * in.overhead + b);
}

}  // namespace

// All p-1 copies leave the root one overhead apart and share its link.
double model_broadcast_flat(const ModelInput& in) { return in.p == 1 ? 0 : fan_out_time(in, in.elems); }

// All p-1 senders post at once (one overhead each) and share the root's link.
double model_reduce_flat(const ModelInput& in) {
  return in.p == 1 ? 0 : in.overhead + in.alpha + (in.p - 1) * in.bytes(in.elems) / in.bandwidth;
}

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

double model_allreduce_naive(const ModelInput& in) { return model_reduce_flat(in) + model_broadcast_flat(in); }

double model_allreduce_naive_binomial(const ModelInput& in) { return 2 * model_broadcast_binomial(in); }

double model_allreduce_ring(const ModelInput& in) {
  return 2 * (in.p - 1) * in.message_time(largest_chunk(in.elems, in.p));
}


// Fold, log2 pof2 swaps of the whole vector, unfold.
double model_allreduce_recursive_doubling(const ModelInput& in) {
  const PowerOfTwoFold fold = fold_to_power_of_two(in.p);
  return (ceil_log2(fold.pof2) + (fold.rem > 0 ? 2 : 0)) * in.message_time(in.elems);
}

// Fold (whole vector), halving and doubling over pof2 blocks, unfold (whole vector).
double model_allreduce_rabenseifner(const ModelInput& in) {
  const PowerOfTwoFold fold = fold_to_power_of_two(in.p);
  const double fold_time = fold.rem > 0 ? 2 * in.message_time(in.elems) : 0;
  return fold_time + 2 * halving_steps(in, fold, split_evenly(in.elems, fold.pof2));
}


double model_allreduce_binary_tree(const ModelInput& in) {
  if (in.p == 1) return 0;
  return tree_phases(in, schedule_binary_tree(in.p, 0), {split_into_segments(in.elems, in.segment_elems)});
}

double model_allreduce_double_binary_tree(const ModelInput& in) {
  if (in.p == 1) return 0;
  std::vector<std::vector<Chunk>> segments;
  for (const Chunk& half : split_evenly(in.elems, 2))
    segments.push_back(split_into_segments(half.count, in.segment_elems));
  return tree_phases(in, schedule_double_binary_tree(in.p), segments);
}

// Every rank fans out to r+1, r+2, ...: each link carries p-1 flows, staggered by the
// overhead as in a flat broadcast.
double model_allreduce_direct(const ModelInput& in) { return in.p == 1 ? 0 : fan_out_time(in, in.elems); }

// Inside the groups: g_k - 1 ring steps each way, paced by the group's largest chunk, the
// slowest group last; between them: G - 1 steps each way, paced by the largest part of a
// piece. Exact for equal groups (the pieces are the chunks):
// 2(g-1)(alpha + n/(gB)) + 2(G-1)(alpha' + n/(gGB')); with unequal groups an estimate.
double model_allreduce_hierarchical(const ModelInput& in) {
  if (in.p == 1) return 0;
  const std::vector<int> sizes = in.group_sizes.empty() ? std::vector<int>{in.p} : in.group_sizes;
  int ranks = 0;
  for (int size : sizes) ranks += size;
  if (ranks != in.p) throw std::logic_error("model_allreduce_hierarchical: group sizes do not add up to p");
  auto step = [&](const std::optional<SharedRoutes>& routes, size_t count) {
    const SharedRoutes r = routes.value_or(SharedRoutes{in.alpha, in.bandwidth, 1});
    return in.overhead + r.alpha + in.bytes(count) / r.per_message_bandwidth();
  };
  const HierarchyPlan plan = plan_hierarchy(consecutive_groups(sizes), in.elems);
  double inside = 0;
  for (const auto& chunks : plan.group_chunks)
    inside = std::max(inside, static_cast<double>(chunks.size() - 1) * step(in.intra, chunks.front().count));
  const auto groups = static_cast<int>(sizes.size());
  size_t largest_part = 0;
  for (const auto& piece : plan.pieces) largest_part = std::max(largest_part, largest_chunk(piece.span.count, groups));
  return 2 * inside + 2 * (groups - 1) * step(in.inter, largest_part);
}

// Push, then pull: each phase p-1 flows of a shard share a server's link (its downlink,
// then its uplink), the largest shard last to finish. Without overhead:
// 2 (alpha + (p-1) w), w = n/(SB). With an overhead o, every rank sends to servers 0, 1, ...
// one o apart, so the last server's flows arrive at (S-1) o (from the other servers) and
// S o (from the rest), and each server's pull is a fan-out of p-1 messages; that sum is
// an estimate (the servers do not start their pulls at exactly the same time).
double model_allreduce_parameter_server(const ModelInput& in) {
  if (in.p == 1) return 0;
  const int s = servers_in_group(in.servers, in.p);
  const double w = in.bytes(largest_chunk(in.elems, s)) / in.bandwidth, o = in.overhead;
  double push = (s - 1) * o + (in.p - 1) * w;
  if (in.p > s) push = std::max(push, s * o + (in.p - s) * w);
  const double pull = std::max(o + (in.p - 1) * w, (in.p - 1) * o + w);
  return 2 * in.alpha + push + pull;
}

// The root's scatter messages (min(2^i, p - 2^i) chunks each) then p-1 ring steps.
double model_broadcast_scatter_allgather(const ModelInput& in) {
  if (in.p == 1) return 0;
  const auto chunks = split_evenly(in.elems, in.p);
  double time = 0;
  for (int mask = 1; mask < in.p; mask *= 2)
    time += in.message_time(span_of(chunks, mask, std::min(mask, in.p - mask)).count);
  return time + model_allgather_ring(in);
}

double model_reduce_scatter_ring(const ModelInput& in) {
  return (in.p - 1) * in.message_time(largest_chunk(in.elems, in.p));
}

// Fold (whole vector), halving over the pof2 blocks (two chunks for a folded pair), unfold
// (one chunk).
double model_reduce_scatter_recursive_halving(const ModelInput& in) {
  const PowerOfTwoFold fold = fold_to_power_of_two(in.p);
  const double fold_time =
      fold.rem > 0 ? in.message_time(in.elems) + in.message_time(largest_chunk(in.elems, in.p)) : 0;
  return fold_time + halving_steps(in, fold, fold.blocks(split_evenly(in.elems, in.p)));
}

double model_allgather_ring(const ModelInput& in) { return model_reduce_scatter_ring(in); }

// Fold (one chunk), doubling over the pof2 blocks, unfold (whole vector): the
// reduce-scatter's messages in reverse order.
double model_allgather_recursive_doubling(const ModelInput& in) { return model_reduce_scatter_recursive_halving(in); }

LowerBound lower_bound(Collective collective, const ModelInput& in) {
  if (in.p == 1) return {};
  const double n = in.bytes(in.elems);
  const double latency_term = ceil_log2(in.p) * (in.min_alpha >= 0 ? in.min_alpha : in.alpha);
  const double b = in.injection_bandwidth > 0 ? in.injection_bandwidth : in.bandwidth;
  switch (collective) {
    case Collective::allreduce: return {2.0 * (in.p - 1) / in.p * n / b, latency_term};
    case Collective::broadcast:
    case Collective::reduce: return {n / b, latency_term};
    case Collective::reduce_scatter:
    case Collective::allgather: return {1.0 * (in.p - 1) / in.p * n / b, latency_term};
  }
  return {};
}

double busbw_factor(Collective collective, int p) {
  switch (collective) {
    case Collective::allreduce: return 2.0 * (p - 1) / p;
    case Collective::reduce_scatter:
    case Collective::allgather: return 1.0 * (p - 1) / p;
    case Collective::broadcast:
    case Collective::reduce: return 1.0;
  }
  return 1.0;
}

}  // namespace collsim
