// Your algorithms, lab 7 (docs/labs/lab7-write-your-own-allreduce.md): an allreduce and a
// broadcast that collsim runs as `--algorithm student`, verifies on every rank, times, and
// prices with the schedule you write beside each.
//
// To work on them: copy this file anywhere, edit it, and build collsim with it:
//   cp src/algorithms/student.cpp ~/my_allreduce.cpp
//   cmake -S . -B build -DCOLLSIM_STUDENT_FILE=$HOME/my_allreduce.cpp && cmake --build build -j2
//   build/collsim run --algorithm student --workers 5 --size 1MiB      # verified on every rank?
//   build/collsim check lab7 --student YOUR_NAME                        # what is graded
// Keep all four functions (collsim calls each of them); replace the bodies of your
// collective's two with your code.
//
// As shipped, each calls the starting point, a chain, correct but slow: read it in
// algorithms/student_chain_allreduce.hpp and student_chain_broadcast.hpp. The allreduce reduces along a chain to rank 0 and sends the
// result back along the chain (2(p-1) message times of the whole vector), the broadcast passes
// the whole vector down the chain (p-1 of them).
#include "algorithms/student_chain_allreduce.hpp"
#include "algorithms/student_chain_broadcast.hpp"

namespace collsim {

// The allreduce: every rank's buffer holds its contribution on entry and the reduction of
// all contributions (args.op: sum, max, ...) on return. buf.size(), buf.view(offset, count),
// comm.sendrecv(...), args.op->combine(into, from): the lab's table has the whole API.
void allreduce_student(Comm& comm, Buffer& buf, const CollectiveArgs& args) { student_chain::allreduce(comm, buf, args); }

// What the cost model prices (collsim run prints "model time"): one Step per round of
// messages that travel at the same time, each send(src, dst, bytes).
Schedule schedule_allreduce_student(const ModelInput& in) { return student_chain::schedule_allreduce(in); }

// The broadcast: the root's buffer (root_in_group(args.root, comm.size())) reaches every rank.
void broadcast_student(Comm& comm, Buffer& buf, const CollectiveArgs& args) { student_chain::broadcast(comm, buf, args); }

Schedule schedule_broadcast_student(const ModelInput& in) { return student_chain::schedule_broadcast(in); }

}  // namespace collsim
