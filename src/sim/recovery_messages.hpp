#pragma once
// The typed messages of the recovery protocol (the state machine is in coordinator.hpp).
#include <cstdint>
#include <memory>

namespace collsim {

class CommGroup;

// A verdict's size on the wire: a few words (what its trip costs, verdict_seconds).
constexpr uint64_t control_message_bytes = 64;

// Worker -> coordinator, out of band (sim/detector.hpp): a suspicion (a wait past its
// deadline), a failure (a transfer that broke), a straggler (a progress score below the
// threshold for the window), a join (a worker whose host came back), or an undelivered
// verdict (the worker's read of its last verdict failed: a link on its way went down).
struct Report {
  enum class Kind { suspicion, failure, straggler, slow_pair, join, undelivered } kind = Kind::suspicion;
  int world = 0;
  int peer = -1;        // whom it waits on (-1: nobody, or the coordinator)
  double since = 0;     // since when
};

// Coordinator -> worker, over the simulated network: leave the run, or the new group and
// the round to resume from (the "new group" message), or an admission: a returning worker
// joins the group at the start of that round and receives the model there (it has no state
// of its own: it restarts the round from its beginning, the model's share).
struct Verdict {
  bool dropped = false;
  std::shared_ptr<CommGroup> group;
  int resume_round = 0;
  bool admission = false;
};

}  // namespace collsim
