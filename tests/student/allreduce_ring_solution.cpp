// A student's ring allreduce (tests/cli/test_student.py builds it as collsim_student_ring
// and checks that lab 7's sheet grades it right): reduce-scatter then allgather, each rank
// sending a chunk to its right neighbour at every step. tests/CMakeLists.txt also builds it
// with a classic mistake, the reduce-scatter one step short (collsim_student_wrong).
#include "algorithms/chunks.hpp"
#include "algorithms/student_chain_broadcast.hpp"

namespace collsim {

void allreduce_student(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size(), r = comm.rank();
  auto chunk = [&](int i) {
    const Chunk c = even_chunk(buf.size(), p, ((i % p) + p) % p);
    return buf.view(c.offset, c.count);
  };
  Buffer incoming = buf.scratch(chunk(0).logical);  // chunk 0 is the largest
  for (int step = 0; step < p - 1; ++step) {
    comm.label("reduce-scatter", step);
    View partial = incoming.holding(chunk(r - step - 1));
    comm.sendrecv(comm.right(), chunk(r - step), comm.left(), partial);
    args.op->combine(chunk(r - step - 1), partial);
  }
  for (int step = 0; step < p - 1; ++step) {
    comm.label("allgather", step);
    comm.sendrecv(comm.right(), chunk(r + 1 - step), comm.left(), chunk(r - step));
  }
}

Schedule schedule_allreduce_student(const ModelInput& in) {
  Schedule schedule;
  const double chunk = in.bytes(even_chunk(in.elems, in.p, 0).count);  // the largest chunk sets a step's pace
  for (int step = 0; step < 2 * (in.p - 1); ++step) {
    Step& s = schedule.step();
    for (int r = 0; r < in.p; ++r) s.send(r, (r + 1) % in.p, chunk);
  }
  return schedule;
}

// The broadcast is not this student's: the template's chain.
void broadcast_student(Comm& comm, Buffer& buf, const CollectiveArgs& args) { student_chain::broadcast(comm, buf, args); }

Schedule schedule_broadcast_student(const ModelInput& in) { return student_chain::schedule_broadcast(in); }

}  // namespace collsim
