#pragma once
// Recovery by rebuilding the group (recovery.policy "rebuild").
//
// Where it runs: the coordinator is an actor on the control host, a host that no fault
// of the scenario preempts (preferably one without a worker), chosen when the run starts;
// so it is never preempted itself. It only acts when workers report.
//
// Protocol: a worker whose wait times out, or whose peer fails, sends a Report (its epoch,
// round, and the peer it was waiting on) and waits for the coordinator's answer. From the
// first report of an epoch, the coordinator collects reports for a window (2 x the
// timeout + one round's compute). It drops the members that never reported (dead, or
// stuck computing); if every member reported, it drops the one that most others were
// waiting on (the far end of a slow or broken link), when at least two point at it.
// It then bumps the epoch, builds the new group (survivors re-numbered in rank order)
// and tells every survivor, with the round to resume from; late reporters of an older
// epoch are told they were dropped. Mailboxes are named per epoch, so no message of an
// abandoned epoch can be matched in the new one.
#include <memory>
#include <string>

#include "sim/run_state.hpp"

namespace collsim {

struct Report {
  int world = 0;
  int epoch = 0;
  int round = 0;
  int suspect = -1;        // world rank it was waiting on, -1 if none
  std::string reason;      // "timeout", "peer failure"
};

struct GroupNews {
  bool dropped = false;    // leave the run
  std::shared_ptr<CommGroup> group;
  int resume_round = 0;
};

void start_coordinator(RunState& state);

// Worker side: report a failure of the current collective and wait for the answer.
GroupNews report_failure(const Report& report);

}  // namespace collsim
