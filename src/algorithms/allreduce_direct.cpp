// Direct allreduce: every rank sends its whole vector to every other rank at once and
// reduces all p vectors in rank order (so every rank holds the same bits). One latency,
// but the p-1 flows leaving (and reaching) each rank share its link: alpha + (p-1) n/B.
// Memory: p-1 incoming vectors per rank.
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void allreduce_direct(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size();
  const int r = comm.rank();
  std::vector<Buffer> incoming(static_cast<size_t>(p));
  std::vector<Request> transfers;
  comm.label("exchange", 0);
  // post every receive and every send at once
  for (int peer = 0; peer < p; ++peer) {
    if (peer == r) continue;
    incoming[static_cast<size_t>(peer)] = buf.scratch(buf.size());
    transfers.push_back(comm.irecv(peer, incoming[static_cast<size_t>(peer)].all()));
  }
  // r+1, r+2, ...: with a per-message overhead the sends leave one after another, and this
  // order gives every receiver one new sender at a time instead of all of them at once
  for (int k = 1; k < p; ++k) transfers.push_back(comm.isend((r + k) % p, buf.all()));
  comm.wait_all(transfers);
  // reduce in rank order: x0 op x1 op ... op x(p-1)
  Buffer result = r == 0 ? buf : incoming[0];
  for (int q = 1; q < p; ++q)
    args.op->combine(result.all(), q == r ? buf.all() : incoming[static_cast<size_t>(q)].all());
  buf = std::move(result);
}

// One step: every rank sends its vector to r+1, r+2, ... one overhead apart.
Schedule schedule_allreduce_direct(const ModelInput& in) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  Step& step = schedule.step();
  step.reduced = true;
  step.expect(static_cast<size_t>(in.p) * static_cast<size_t>(in.p - 1));
  for (int r = 0; r < in.p; ++r)
    for (int k = 1; k < in.p; ++k) step.send(r, (r + k) % in.p, in.bytes(in.elems));
  return schedule;
}

}  // namespace collsim
