// Flat reduce: every rank sends its whole vector to the root at once (p-1 flows share
// the root's downlink: alpha + (p-1) n/B); the root folds them in rank order.
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

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
    incoming.push_back(buf.scratch(buf.size()));
    receives.push_back(comm.irecv(peer, incoming.back().all()));
  }
  comm.wait_all(receives);
  for (Buffer& partial : incoming) args.op->combine(buf.all(), partial.all());
}

// Every rank's vector to the root at once: they share the root's link.
Schedule schedule_reduce_flat(const ModelInput& in) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  Step& step = schedule.step();
  step.reduced = true;
  for (int peer = 0; peer < in.p; ++peer)
    if (peer != in.root) step.send(peer, in.root, in.bytes(in.elems));
  return schedule;
}

}  // namespace collsim
