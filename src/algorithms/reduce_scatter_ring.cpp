// Ring reduce-scatter: the first half of the ring allreduce, shifted so that rank r ends
// with chunk r. p-1 steps of n/p bytes: (p-1) (alpha + n/(pB)).
#include "algorithms/algorithms.hpp"

namespace collsim {

void reduce_scatter_ring(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size();
  const int r = comm.rank();
  const auto chunks = split_evenly(buf.size(), p);
  Buffer incoming(buf.dtype(), chunks.front().count);
  auto chunk = [&](int index) { return buf.view(chunks[index].offset, chunks[index].count); };
  // after step s, rank r holds the partial sum of chunk (r - s - 2) mod p over s + 2 ranks
  for (int step = 0; step < p - 1; ++step) {
    const int send_index = mod(r - step - 1, p);
    const int recv_index = mod(r - step - 2, p);
    View partial = incoming.view(0, chunks[recv_index].count);
    comm.label("reduce-scatter", step);
    // send my partial chunk to the right, receive the left's partial of the next chunk
    comm.sendrecv(comm.right(), chunk(send_index), comm.left(), partial);
    args.op->combine(chunk(recv_index), partial);
  }
  // now rank r holds chunk r reduced over all ranks
}

}  // namespace collsim
