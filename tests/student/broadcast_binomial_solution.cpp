// A student's binomial-tree broadcast (tests/cli/test_student.py builds it as
// collsim_student_broadcast and checks that lab 7's broadcast sheet grades it right): the set
// of ranks holding the vector doubles every round, ceil(log2 p) rounds of the whole vector.
// The allreduce is not this student's: the template's chain.
#include "algorithms/student_chain_allreduce.hpp"

namespace collsim {

void allreduce_student(Comm& comm, Buffer& buf, const CollectiveArgs& args) { student_chain::allreduce(comm, buf, args); }

Schedule schedule_allreduce_student(const ModelInput& in) { return student_chain::schedule_allreduce(in); }

// Ranks are numbered from the root (distance d = r - root mod p). In round k the ranks with
// d < 2^k hold the vector, and each sends it to d + 2^k.
void broadcast_student(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size();
  const int root = root_in_group(args.root, p);
  const int d = (comm.rank() - root + p) % p;
  for (int k = 0, span = 1; span < p; ++k, span *= 2) {
    comm.label("broadcast", k);
    if (d < span && d + span < p) comm.send((comm.rank() + span) % p, buf.all());
    if (d >= span && d < 2 * span) comm.recv((comm.rank() - span + p) % p, buf.all());
  }
}

Schedule schedule_broadcast_student(const ModelInput& in) {
  Schedule schedule;
  const double n = in.bytes(in.elems);
  for (int span = 1; span < in.p; span *= 2) {
    Step& round = schedule.step();
    for (int d = 0; d < span && d + span < in.p; ++d) round.send((in.root + d) % in.p, (in.root + d + span) % in.p, n);
  }
  return schedule;
}

}  // namespace collsim
