// What a worker waiting on a parameter server's process waits on (detector.hpp): the server
// is no member, and its own waits are not followed.
#include "recovery/detector.hpp"

namespace collsim {

// A synchronous server answers a pull once every pusher's push is in: a member still
// computing holds it up. A worker slowed past its deadline behind the servers was never
// reported after its computation passed that deadline (the wait on the server was checked
// later and later), and so never judged a straggler.
double Detector::server_waits_on_computing(double now) const {
  double first = 0;
  for (int world : membership_.current().members()) {
    const RankActivity& rank = activity(world);
    if (rank.doing != RankActivity::Doing::computing) continue;
    const double deadline = compute_deadline(rank);
    if (deadline > now && (first == 0 || deadline < first)) first = deadline;
  }
  return first;
}

}  // namespace collsim
