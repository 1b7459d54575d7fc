// Scatter-allgather broadcast (van de Geijn; Barnett et al. 1994; MPICH's long-message
// broadcast): the root scatters p chunks down a binomial tree (each subtree receives its
// chunks in one message), then a ring allgather completes every rank's copy. Power of two:
// (log2 p + p - 1) alpha + 2 (p-1)/p n/B.
#include <algorithm>

#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void broadcast_scatter_allgather(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size();
  const int relative = mod(comm.rank() - args.root, p);
  auto rank_of = [&](int rel) { return (rel + args.root) % p; };
  const auto chunks = split_evenly(buf.size(), p);  // chunk q belongs to relative rank q
  int rounds = 0;  // ceil(log2 p)
  while ((1 << rounds) < p) ++rounds;
  // 1. binomial scatter: receive my subtree's chunks [relative, relative + lowbit) once ...
  int mask = 1;
  while (mask < p) {
    if (relative & mask) {
      const Chunk mine = span_of(chunks, relative, std::min(mask, p - relative));
      comm.recv(rank_of(relative - mask), buf.view(mine.offset, mine.count));
      break;
    }
    mask <<= 1;
  }
  // ... then hand each child its subtree's chunks, the largest subtree first
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (relative + mask >= p) continue;
    const Chunk theirs = span_of(chunks, relative + mask, std::min(mask, p - relative - mask));
    int level = 0;  // log2 mask
    while ((1 << level) < mask) ++level;
    comm.label("scatter", rounds - 1 - level);
    comm.send(rank_of(relative + mask), buf.view(theirs.offset, theirs.count));
  }
  // 2. ring allgather: relative rank q starts with chunk q
  ring_allgather(comm, buf, relative);
}

// The binomial scatter (relative rank v hands v+mask its subtree's chunks), then p-1 ring
// steps paced by the largest chunk. Followed rank by rank: a rank sends its next subtree its
// chunks once its last send is out, and starts the ring once its part of the scatter is done,
// without waiting for a step it takes no part in; in lock step, a scatter step would wait out
// the slowest hop of the step before (on GPUs a hop across nodes holds its receiver 14 us
// where NVLink holds 3.4 us, NCCL's hwLat), which no rank of the other branches waits for.
Schedule schedule_broadcast_scatter_allgather(const ModelInput& in) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  schedule.mark_rank_by_rank();
  const int p = in.p;
  const auto chunks = split_evenly(in.elems, p);
  for (int mask = 1 << (ceil_log2(p) - 1); mask > 0; mask >>= 1) {
    Step& step = schedule.step();
    for (int v = 0; v + mask < p; v += 2 * mask)
      step.send((v + in.root) % p, (v + mask + in.root) % p,
                in.bytes(span_of(chunks, v + mask, std::min(mask, p - v - mask)).count));
  }
  ring_steps(schedule, p, in.bytes(chunks.front().count), p - 1);
  return schedule;
}

}  // namespace collsim
