// NCCL's ring allreduce (src/device/all_reduce.h, runRing): k channels, each a ring over
// the ranks that visits every node's GPUs in turn (channels.hpp: channel c enters each node
// at GPU c and leaves it from GPU c-1, so that on rail:N:G with PXN its node crossings stay
// on rail c), each reducing then gathering its slice of the vector in 2(p-1) steps.
// Unlike collsim's ring (lock step: a rank waits for its send and its receive), a rank here
// forwards what it receives as soon as it has it and leaves its sends in flight, as NCCL's
// FIFO of NCCL_STEPS slots lets it: latencies add up along the data's path around the ring
// (NCCL's model: 2(p-1-N') intra-node hops and 2N' network hops), and a slow link paces
// only the data that crosses it.
#include <algorithm>

#include "algorithms/algorithms.hpp"
#include "algorithms/channels.hpp"
#include "algorithms/hierarchy.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

namespace {

View chunk_of(Buffer& buf, const RingTask& ring, int index) {
  const Chunk c = ring.chunk(index);
  return buf.view(c.offset, c.count);
}

// Where each step's message from the left lands: the reduce-scatter's partials in scratch
// (one slot per step and ring: every receive is posted at once), each shaped as the chunk
// it stands for (Buffer::scratch, holding: as many carried and logical elements), the
// allgather's chunks in place.
struct Landing {
  std::vector<Buffer> slots;
  std::vector<std::vector<View>> into;  // [step][ring]
};

Landing plan_landing(Buffer& buf, const std::vector<RingTask>& rings, int p) {
  Landing landing;
  landing.slots.reserve(static_cast<size_t>(p - 1) * rings.size());  // views point into them
  for (int step = 0; step < 2 * (p - 1); ++step) {
    landing.into.emplace_back();
    for (const RingTask& ring : rings) {
      // reduce-scatter step s: the left's partial of chunk i - s - 2; allgather step s: chunk i - s - 1
      if (step < p - 1) {
        const View part = chunk_of(buf, ring, ring.position - step - 2);
        landing.slots.push_back(buf.scratch(part.logical));
        landing.into.back().push_back(landing.slots.back().holding(part));
      } else {
        landing.into.back().push_back(chunk_of(buf, ring, ring.position - (step - p + 1) - 1));
      }
    }
  }
  return landing;
}

}  // namespace

// nccl-ring-begin
void allreduce_nccl_ring(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size();
  if (p == 1) return;
  const std::vector<RingTask> rings = channel_ring_tasks(comm, buf.size(), args.channels);
  const size_t k = rings.size();
  const int steps = 2 * (p - 1), fifo = std::max(1, args.fifo);
  // NCCL's FIFO of `fifo` chunks per connection: a rank receives up to `fifo` steps ahead
  // and leaves its sends in flight for `fifo` steps, forwarding what it receives at once
  Landing landing = plan_landing(buf, rings, p);
  std::vector<Request> receives(static_cast<size_t>(steps) * k), sends(static_cast<size_t>(steps) * k);
  auto post_receives = [&](int step) {
    if (step < steps)
      for (size_t j = 0; j < k; ++j) receives[step * k + j] = comm.irecv(rings[j].left(), landing.into[step][j]);
  };
  for (int step = 0; step < fifo; ++step) post_receives(step);
  for (int step = 0; step < steps; ++step) {
    const bool reducing = step < p - 1;
    comm.label(reducing ? "reduce-scatter" : "allgather", reducing ? step : step - p + 1);
    for (size_t j = 0; j < k; ++j) {
      // 1. reduce-scatter: member i passes on its partial of chunk i - s - 1; 2. allgather:
      //    member i holds chunk i reduced and passes on the chunk received last
      const int index = reducing ? rings[j].position - step - 1 : rings[j].position - (step - p + 1);
      sends[step * k + j] = comm.isend(rings[j].right(), chunk_of(buf, rings[j], index));
    }
    post_receives(step + fifo);
    for (size_t j = 0; j < k; ++j) comm.wait(receives[step * k + j]);
    // the send `fifo` steps back leaves its slot (the last step waits for every send)
    for (int sent = std::max(0, step - fifo); sent <= (step == steps - 1 ? step : step - fifo); ++sent)
      for (size_t j = 0; j < k; ++j) comm.wait(sends[sent * k + j]);
    // the reduce-scatter adds the left's partial of chunk i - s - 2 into mine
    if (reducing)
      for (size_t j = 0; j < k; ++j) args.op->combine(chunk_of(buf, rings[j], rings[j].position - step - 2), landing.into[step][j]);
  }
}
// nccl-ring-end

// 2(p-1) steps of the k rings' messages, each rank going on as soon as its receives are in
// (its sends left in flight): followed rank by rank.
Schedule schedule_allreduce_nccl_ring(const ModelInput& in) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  schedule.mark_rank_by_rank();
  const auto groups = model_groups(in);
  const auto slices = channel_slices(in.elems, in.channels);
  for (int step = 0; step < 2 * (in.p - 1); ++step) {
    Step& s = schedule.step();
    s.reduced = step < in.p - 1;
    s.fifo = in.fifo;
    for (int c = 0; c < in.channels; ++c) {
      const std::vector<int> ring = channel_ring(groups, in.p, c);
      const Chunk slice = slices[static_cast<size_t>(c)];
      for (int i = 0; i < in.p; ++i) {
        // member i sends chunk i - s - 1 (reduce-scatter) or i - s' (allgather, s' = s - p + 1)
        const int index = step < in.p - 1 ? i - step - 1 : i - (step - in.p + 1);
        const double bytes = in.bytes(even_chunk(slice.count, in.p, mod(index, in.p)).count);
        s.send(ring[static_cast<size_t>(i)], ring[static_cast<size_t>((i + 1) % in.p)], bytes);
      }
    }
  }
  return schedule;
}

}  // namespace collsim
