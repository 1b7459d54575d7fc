// Ring allreduce: ring reduce-scatter then ring allgather, 2(p-1) steps of n/p bytes.
// Bandwidth-optimal: each rank sends 2(p-1)/p * n bytes (Patarasuk & Yuan 2009).
// With k channels (NCCL's), slice c of the vector goes round channel c's ring
// (channels.hpp), all k rings at once: 2(p-1) steps of n/(kp) bytes per ring.
#include "algorithms/algorithms.hpp"
#include "algorithms/channels.hpp"
#include "algorithms/hierarchy.hpp"
#include "algorithms/schedules.hpp"
#include "algorithms/chunks.hpp"

namespace collsim {

namespace {

void allreduce_ring_channels(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const std::vector<RingTask> rings = channel_ring_tasks(comm, buf.size(), args.channels);
  rings_reduce_scatter(comm, buf, *args.op, rings, "reduce-scatter");
  rings_allgather(comm, buf, rings, "allgather");
}

}  // namespace

// ring-begin
void allreduce_ring(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  if (args.channels > 1 && comm.size() > 1) return allreduce_ring_channels(comm, buf, args);
  const int p = comm.size();
  const int r = comm.rank();
  auto chunk = [&](int index) {
    const Chunk c = even_chunk(buf.size(), p, index);
    return buf.view(c.offset, c.count);
  };
  Buffer incoming = buf.scratch(even_chunk(buf.size(), p, 0).count);  // chunk 0 is the largest

  // 1. reduce-scatter: after step s, rank r holds the partial sum of chunk (r - s - 1) mod p
  for (int step = 0; step < p - 1; ++step) {
    const int send_index = mod(r - step, p);
    const int recv_index = mod(r - step - 1, p);
    View partial = incoming.holding(chunk(recv_index));
    comm.label("reduce-scatter", step);
    // send my partial chunk to the right, receive the left's partial of the next chunk
    comm.sendrecv(comm.right(), chunk(send_index), comm.left(), partial);
    // reduce it into mine
    args.op->combine(chunk(recv_index), partial);
  }
  // now rank r holds the fully reduced chunk (r + 1) mod p

  // 2. allgather: pass the fully reduced chunks around the ring, overwriting stale ones
  for (int step = 0; step < p - 1; ++step) {
    const int send_index = mod(r - step + 1, p);
    const int recv_index = mod(r - step, p);
    comm.label("allgather", step);
    comm.sendrecv(comm.right(), chunk(send_index), comm.left(), chunk(recv_index));
  }
}
// ring-end

// 2(p-1) identical steps, each paced by the largest chunk; with k channels every step
// carries the k rings' messages at once.
Schedule schedule_allreduce_ring(const ModelInput& in) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  // the reduce-scatter's steps reduce, the allgather's do not
  // channel c's largest chunk: the first of its slice
  std::vector<double> bytes;
  for (const Chunk& slice : channel_slices(in.elems, std::max(1, in.channels)))
    bytes.push_back(in.bytes(even_chunk(slice.count, in.p, 0).count));
  for (const StepRun& run : reduce_then_gather(in, in.p - 1)) channel_ring_steps(schedule, in, bytes, run.repeat, run.reduced);
  return schedule;
}

}  // namespace collsim
