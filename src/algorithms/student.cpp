// Your algorithms, lab 7 (docs/labs/lab7-write-your-own-allreduce.md): an allreduce and a
// broadcast that collsim runs as `--algorithm student`, verifies on every rank, times, and
// prices with the schedule you write beside each.
//
// To work on them: copy this file anywhere, edit it, and build collsim with it:
//   cp src/algorithms/student.cpp ~/my_allreduce.cpp
//   cmake -S . -B build -DCOLLSIM_STUDENT_FILE=$HOME/my_allreduce.cpp && cmake --build build -j2
//   build/collsim run --algorithm student --workers 5 --size 1MiB      # verified on every rank?
//   build/collsim check lab7 --student YOUR_NAME                        # what is graded
// Keep all four functions (collsim calls each of them); change the ones of your collective.
//
// As shipped, these are the starting point, correct but slow: the allreduce reduces along
// a chain to rank 0 and sends the result back along the chain (2(p-1) message times of the
// whole vector), the broadcast passes the whole vector down the chain (p-1 of them).
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

// The allreduce: every rank's buffer holds its contribution on entry and the reduction of
// all contributions (args.op: sum, max, ...) on return.
void allreduce_student(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size(), r = comm.rank();
  // room for a peer's vector, shaped as this one (scratch, holding: collsim may keep fewer
  // elements in memory than the network carries)
  Buffer incoming = buf.scratch(buf.size());
  View received = incoming.holding(buf.all());
  // 1. reduce along the chain p-1 -> ... -> 1 -> 0: rank r adds what r+1 sends and passes it on
  comm.label("reduce", 0);
  if (r < p - 1) {
    comm.recv(r + 1, received);
    args.op->combine(buf.all(), received);
  }
  if (r > 0) comm.send(r - 1, buf.all());
  // 2. broadcast the result back along the chain 0 -> 1 -> ... -> p-1
  comm.label("broadcast", 0);
  if (r > 0) comm.recv(r - 1, buf.all());
  if (r < p - 1) comm.send(r + 1, buf.all());
}

// What the cost model prices (collsim run prints "model time"): one Step per round of
// messages that travel at the same time, each send(src, dst, bytes).
Schedule schedule_allreduce_student(const ModelInput& in) {
  Schedule schedule;
  const double n = in.bytes(in.elems);
  for (int r = in.p - 1; r > 0; --r) schedule.step().send(r, r - 1, n);
  for (int r = 0; r + 1 < in.p; ++r) schedule.step().send(r, r + 1, n);
  return schedule;
}

// The broadcast: the root's buffer (args.root) reaches every rank.
void broadcast_student(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size(), r = comm.rank();
  const int root = root_in_group(args.root, p);  // the scenario's root (rank 0 in a smaller rebuilt group)
  const int position = (r - root + p) % p;        // 0 for the root, then along the chain
  comm.label("broadcast", 0);
  if (position > 0) comm.recv((r - 1 + p) % p, buf.all());
  if (position < p - 1) comm.send((r + 1) % p, buf.all());
}

Schedule schedule_broadcast_student(const ModelInput& in) {
  Schedule schedule;
  const double n = in.bytes(in.elems);
  for (int i = 0; i + 1 < in.p; ++i) schedule.step().send((in.root + i) % in.p, (in.root + i + 1) % in.p, n);
  return schedule;
}

}  // namespace collsim
