// Pipelined chain broadcast: ranks form a chain from the root; the message is cut into
// segments and rank i forwards segment j to rank i+1 while receiving segment j+1.
// With k segments of m bytes: (p-1 + k-1) steps of alpha + m/B.
//
//   step:      0     1     2     3
//   0->1      s0    s1    s2
//   1->2            s0    s1    s2 ...
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"
#include "algorithms/chunks.hpp"

namespace collsim {

void broadcast_pipeline(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size();
  const int position = mod(comm.rank() - args.root, p);  // distance from the root along the chain
  const bool has_prev = position > 0;
  const bool has_next = position + 1 < p;
  const int prev = mod(comm.rank() - 1, p);
  const int next = mod(comm.rank() + 1, p);
  const auto segments = split_into_segments(buf.size(), args.segment_elems);

  // Wait for the first segment, then forward segment j while receiving segment j+1.
  if (has_prev) comm.recv(prev, buf.view(segments[0].offset, segments[0].count));
  for (size_t j = 0; j < segments.size(); ++j) {
    comm.label("broadcast", static_cast<int>(j) + position);
    std::vector<Request> pending;
    if (has_next) pending.push_back(comm.isend(next, buf.view(segments[j].offset, segments[j].count)));
    if (has_prev && j + 1 < segments.size())
      pending.push_back(comm.irecv(prev, buf.view(segments[j + 1].offset, segments[j + 1].count)));
    comm.wait_all(pending);
  }
}

// Segment j crosses link i (root+i -> root+i+1) at step i + j: p-1 + k-1 steps.
Schedule schedule_broadcast_pipeline(const ModelInput& in) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  const auto segments = split_into_segments(in.elems, in.segment_elems);
  const int k = static_cast<int>(segments.size()), links = in.p - 1;
  schedule.mark_rank_by_rank();
  for (int s = 0; s < k + links - 1; ++s) {
    Step& step = schedule.step();
    for (int i = std::max(0, s - k + 1); i <= std::min(s, links - 1); ++i)
      step.send((in.root + i) % in.p, (in.root + i + 1) % in.p, in.bytes(segments[static_cast<size_t>(s - i)].count));
    schedule.merge_last_if_repeated();
  }
  return schedule;
}

}  // namespace collsim
