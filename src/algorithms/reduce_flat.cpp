// Flat reduce: every rank sends its whole vector to the root at once (p-1 flows share
// the root's downlink: alpha + (p-1) n/B); the root folds them in rank order.
#include "algorithms/algorithms.hpp"

namespace collsim {

void reduce_flat(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  if (comm.rank() != args.root) {
    comm.label("reduce", 0);
    comm.send(args.root, buf.all());
    return;
  }
  std::vector<Buffer> incoming;
  std::vector<Request> receives;
  incoming.reserve(static_cast<size_t>(comm.size()));
  for (int peer = 0; peer < comm.size(); ++peer) {
    if (peer == args.root) continue;
    incoming.emplace_back(buf.dtype(), buf.size());
    receives.push_back(comm.irecv(peer, incoming.back().all()));
  }
  comm.wait_all(receives);
  for (Buffer& partial : incoming) args.op->combine(buf.all(), partial.all());
}

}  // namespace collsim
