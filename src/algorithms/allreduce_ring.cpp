// Ring allreduce: ring reduce-scatter then ring allgather, 2(p-1) steps of n/p bytes.
// Bandwidth-optimal: each rank sends 2(p-1)/p * n bytes (Patarasuk & Yuan 2009).
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"
#include "algorithms/chunks.hpp"

namespace collsim {

// ring-begin
void allreduce_ring(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size();
  const int r = comm.rank();
  auto chunk = [&](int index) {
    const Chunk c = even_chunk(buf.size(), p, index);
    return buf.view(c.offset, c.count);
  };
  Buffer incoming(buf.dtype(), chunk(0).count);

  // 1. reduce-scatter: after step s, rank r holds the partial sum of chunk (r - s - 1) mod p
  for (int step = 0; step < p - 1; ++step) {
    const int send_index = mod(r - step, p);
    const int recv_index = mod(r - step - 1, p);
    View partial = incoming.view(0, chunk(recv_index).count);
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

// 2(p-1) identical steps, each paced by the largest chunk.
Schedule schedule_allreduce_ring(const ModelInput& in) {
  Schedule schedule;
  ring_steps(schedule, in.p, in.bytes(split_evenly(in.elems, in.p).front().count), 2 * (in.p - 1));
  return schedule;
}

}  // namespace collsim
