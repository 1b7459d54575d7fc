// The patterns several algorithms' schedules share (schedules.hpp).
#include "algorithms/schedules.hpp"

#include <algorithm>
#include <cmath>

#include "algorithms/channels.hpp"

namespace collsim {

void ring_steps(Schedule& schedule, int p, double bytes, int repeat, bool reduced) {
  if (p < 2 || repeat < 1) return;
  Step& step = schedule.step(repeat);
  step.reduced = reduced;
  for (int r = 0; r < p; ++r) step.send(r, (r + 1) % p, bytes);
}

void channel_ring_steps(Schedule& schedule, const ModelInput& in, const std::vector<double>& bytes, int repeat,
                        bool reduced) {
  if (in.p < 2 || repeat < 1) return;
  if (bytes.size() == 1) return ring_steps(schedule, in.p, bytes.front(), repeat, reduced);
  const auto groups = model_groups(in);
  Step& step = schedule.step(repeat);
  step.reduced = reduced;
  for (size_t c = 0; c < bytes.size(); ++c) {
    const std::vector<int> ring = channel_ring(groups, in.p, static_cast<int>(c));
    for (int i = 0; i < in.p; ++i) step.send(ring[static_cast<size_t>(i)], ring[static_cast<size_t>((i + 1) % in.p)], bytes[c]);
  }
}

void channel_ring_steps(Schedule& schedule, const ModelInput& in, int repeat, bool reduced) {
  const int k = std::max(1, in.channels);
  const size_t largest_chunk = even_chunk(in.elems, in.p, 0).count;
  std::vector<double> bytes;
  for (int c = 0; c < k; ++c) bytes.push_back(in.bytes(even_chunk(largest_chunk, k, c).count));
  channel_ring_steps(schedule, in, bytes, repeat, reduced);
}

std::vector<StepRun> reduce_then_gather(const ModelInput& in, int steps) {
  if (!std::isfinite(in.reduce_bandwidth)) return {{2 * steps, false}};
  return {{steps, true}, {steps, false}};
}

void halving_steps(Schedule& schedule, const ModelInput& in, const PowerOfTwoFold& fold,
                   const std::vector<Chunk>& blocks) {
  const ChunkSpans spans(blocks);
  for (int distance = fold.pof2 / 2; distance > 0; distance /= 2) {
    Step& step = schedule.step();
    step.reduced = true;
    for (int v = 0; v < fold.pof2; ++v) {
      const int partner = v ^ distance;
      step.send(fold.old_rank(v), fold.old_rank(partner), in.bytes(spans.count(partner & ~(distance - 1), distance)));
    }
  }
}

void doubling_steps(Schedule& schedule, const ModelInput& in, const PowerOfTwoFold& fold,
                    const std::vector<Chunk>& blocks) {
  const ChunkSpans spans(blocks);
  for (int distance = 1; distance < fold.pof2; distance *= 2) {
    Step& step = schedule.step();
    for (int v = 0; v < fold.pof2; ++v)
      step.send(fold.old_rank(v), fold.old_rank(v ^ distance), in.bytes(spans.count(v & ~(distance - 1), distance)));
  }
}

void binomial_broadcast_steps(Schedule& schedule, int p, int root, double bytes) {
  const int rounds = ceil_log2(p);
  for (int round = 0; round < rounds; ++round) {
    const int mask = 1 << (rounds - 1 - round);
    Step& step = schedule.step();
    for (int relative = 0; relative + mask < p; relative += 2 * mask)
      step.send((relative + root) % p, (relative + mask + root) % p, bytes);
  }
}

void binomial_reduce_steps(Schedule& schedule, int p, int root, double bytes) {
  for (int mask = 1; mask < p; mask <<= 1) {
    Step& step = schedule.step();
    step.reduced = true;
    for (int relative = mask; relative < p; relative += 2 * mask)
      step.send((relative + root) % p, (relative - mask + root) % p, bytes);
  }
}

namespace {

// same[s]: no tree edge starts or stops carrying segments between steps s and s + 2 of a
// phase (edge v of tree t carries at steps first, first + 2, ..., first + 2 (count - 1)):
// the two steps carry the same messages.
std::vector<char> same_as_two_later(const TreeSchedule& trees, const std::vector<size_t>& counts, int steps) {
  std::vector<char> same(static_cast<size_t>(std::max(steps, 0)), 1);
  auto changes_at = [&](long long s) {
    if (s >= 0 && s < steps) same[static_cast<size_t>(s)] = 0;
  };
  for (size_t t = 0; t < trees.trees.size(); ++t)
    for (size_t v = 0; v < trees.first_step[t].size(); ++v) {
      if (trees.trees[t].parent[v] < 0) continue;
      const long long first = trees.first_step[t][v];
      changes_at(first - 2);
      changes_at(first + 2 * (static_cast<long long>(counts[t]) - 1));
    }
  return same;
}

}  // namespace

void tree_phases(Schedule& schedule, const ModelInput& in, const TreeSchedule& trees,
                 const std::vector<std::vector<Chunk>>& segments) {
  const int p = in.p;
  if (p < 2) return;
  size_t largest = 0;
  std::vector<size_t> counts;
  for (const auto& s : segments) {
    counts.push_back(s.size());
    largest = std::max(largest, s.front().count);
  }
  // every step is paced by the largest segment, as the pipelined algorithms wait for it
  const double bytes = in.bytes(largest);
  if (p == 2) {
    // one edge: the segments of every tree stream over it, one per step, up then down
    size_t most = 0;
    for (size_t c : counts) most = std::max(most, c);
    const int child = trees.trees.front().root == 0 ? 1 : 0, root = 1 - child;
    schedule.step(static_cast<int>(most)).send(child, root, bytes).reduced = true;
    schedule.step(static_cast<int>(most)).send(root, child, bytes);
    return;
  }
  schedule.mark_rank_by_rank();
  const int steps = trees.steps(counts);
  // every tree edge carries each segment of its tree up and down
  double messages = 0;
  for (size_t t = 0; t < trees.trees.size(); ++t) messages += 2.0 * (p - 1) * static_cast<double>(counts[t]);
  const bool lock_step = messages > static_cast<double>(max_followed_messages);
  // broadcast: rank v receives segment j of tree t at step first_step[t][v] + 2j; the
  // reduce is its mirror image in time, child to parent. Returns the step that absorbed
  // it (-1: it stays a step of its own).
  auto phase_step = [&](int s, bool up) {
    const int before = static_cast<int>(schedule.steps().size());
    Step& step = schedule.step();
    step.reduced = up;
    for (size_t t = 0; t < trees.trees.size(); ++t)
      for (int v = 0; v < p; ++v) {
        const int first = trees.first_step[t][static_cast<size_t>(v)];
        const int parent = trees.trees[t].parent[static_cast<size_t>(v)];
        if (parent < 0 || s < first || (s - first) % 2 != 0 || (s - first) / 2 >= static_cast<int>(counts[t])) continue;
        if (up) step.send(v, parent, bytes);
        else step.send(parent, v, bytes);
      }
    if (schedule.merge_last_if_repeated()) return before - 1;
    if (lock_step && schedule.merge_last_if_alternating()) return before - 2;
    return -1;
  };
  // In lock step, a step with the messages of the step two before it, once the two steps
  // before it were both absorbed by merges, is absorbed as that one was: counted without
  // being built again (the schedule is the same; building costs O(p) per step, and a
  // pipeline at p = 131,072 has thousands).
  const std::vector<char> same = lock_step ? same_as_two_later(trees, counts, steps) : std::vector<char>{};
  std::vector<int> absorbed_by;  // by step in the order added
  auto add = [&](int s, bool up, bool as_two_before) {
    const size_t i = absorbed_by.size();
    if (as_two_before && i >= 2 && absorbed_by[i - 1] >= 0 && absorbed_by[i - 2] >= 0) {
      schedule.repeat_step(absorbed_by[i - 2]);
      absorbed_by.push_back(absorbed_by[i - 2]);
    } else {
      absorbed_by.push_back(phase_step(s, up));
    }
  };
  for (int s = steps - 1; s >= 0; --s) add(s, true, lock_step && s + 2 < steps && same[static_cast<size_t>(s)]);
  for (int s = 0; s < steps; ++s) add(s, false, lock_step && s >= 2 && same[static_cast<size_t>(s - 2)]);
}

}  // namespace collsim
