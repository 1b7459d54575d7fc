// Direct alltoall: every rank posts its p-1 sends and p-1 receives at once. One latency,
// but the p-1 blocks leaving (and reaching) a rank share its link: alpha + (p-1) n/(pB),
// the same bytes as pairwise with p-2 latencies fewer.
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

void alltoall_direct(Comm& comm, Buffer& buf, const CollectiveArgs&) {
  const int p = comm.size(), r = comm.rank();
  Buffer out = buf;  // block r stays; the others arrive here
  std::vector<Request> transfers;
  comm.label("exchange", 0);
  for (int k = 1; k < p; ++k) {
    const int from = (r - k + p) % p;
    transfers.push_back(comm.irecv(from, out.block(p, from)));
  }
  // r+1, r+2, ...: with a per-message overhead each receiver meets one new sender at a time
  for (int k = 1; k < p; ++k) {
    const int to = (r + k) % p;
    transfers.push_back(comm.isend(to, buf.block(p, to)));
  }
  comm.wait_all(transfers);
  buf = std::move(out);
}

// One step: every rank sends each block to its owner, r+1, r+2, ... one overhead apart.
Schedule schedule_alltoall_direct(const ModelInput& in) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  Step& step = schedule.step();
  step.expect(static_cast<size_t>(in.p) * static_cast<size_t>(in.p - 1));
  for (int r = 0; r < in.p; ++r)
    for (int k = 1; k < in.p; ++k) {
      const int to = (r + k) % in.p;
      step.send(r, to, in.bytes(alltoall_block(in.elems, in.p, to).count));
    }
  return schedule;
}

}  // namespace collsim
