// Flat broadcast: the root sends the whole message to every other rank at once, so
// p-1 copies share the root's uplink: alpha + (p-1) n/B.
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void broadcast_flat(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  if (comm.rank() != args.root) {
    comm.recv(args.root, buf.all());
    return;
  }
  comm.label("broadcast", 0);
  std::vector<Request> sends;
  for (int peer = 0; peer < comm.size(); ++peer)
    if (peer != args.root) sends.push_back(comm.isend(peer, buf.all()));
  comm.wait_all(sends);
}

// The root's p-1 copies leave one overhead apart and share its link.
Schedule schedule_broadcast_flat(const ModelInput& in) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  Step& step = schedule.step();
  for (int peer = 0; peer < in.p; ++peer)
    if (peer != in.root) step.send(in.root, peer, in.bytes(in.elems));
  return schedule;
}

}  // namespace collsim
