#pragma once
// The broadcast of the chain that lab 7's student slot holds until a student writes their
// own (student_chain_allreduce.hpp says how the slot uses both). It passes the whole vector down the chain from the root: (p-1)(alpha + n/B).
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim::student_chain {

inline void broadcast(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size(), r = comm.rank();
  const int root = root_in_group(args.root, p);  // the scenario's root (rank 0 in a smaller rebuilt group)
  const int position = (r - root + p) % p;        // 0 for the root, then along the chain
  comm.label("broadcast", 0);
  if (position > 0) comm.recv((r - 1 + p) % p, buf.all());
  if (position < p - 1) comm.send((r + 1) % p, buf.all());
}

inline Schedule schedule_broadcast(const ModelInput& in) {
  Schedule schedule;
  const double n = in.bytes(in.elems);
  for (int i = 0; i + 1 < in.p; ++i) schedule.step().send((in.root + i) % in.p, (in.root + i + 1) % in.p, n);
  return schedule;
}

}  // namespace collsim::student_chain
