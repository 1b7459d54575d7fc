#pragma once
// Recovery by rebuilding the group (recovery.policy "rebuild").
//
// Where it runs: the coordinator is an actor on the control host, a host that no fault
// of the scenario preempts (preferably one without a worker), chosen when the run starts;
// so it is never preempted itself.
//
// Protocol (typed messages, recovery/events.hpp):
//   Report   worker -> coordinator, out of band (recovery/detector.hpp): a suspicion (a wait
//            past its deadline), a failure (a transfer that broke), a straggler (a
//            progress score below recovery.straggler_threshold x the group's median for
//            recovery.straggler_window steps), a slow pair (a rank's receives from one peer
//            below that threshold of their earlier pace, as many times in a row, within
//            their deadlines), a slow computation (over within its deadline, at
//            recovery.straggler_threshold of its expected pace or slower: judged as a
//            straggler, dropped or kept by its price and recorded either way), a join (a
//            worker whose host came back), or
//            an undelivered verdict (its read of the last verdict failed on the way).
//            Each says whom the worker waits on and since when.
//   Verdict  coordinator -> worker, over the simulated network: leave the run, or the
//            new group and the round to resume from (the "new group" message). A
//            suspicious wait listens for it beside its transfer (a wait not yet
//            suspicious hears it at its deadline, a computing rank at its next wait);
//            abandoning cancels the rank's transfers, which wakes its peers. It crosses
//            when the worker reads it: a link on its way that went down since it was sent
//            loses it, which says nothing of the worker; the worker reports it undelivered
//            and waits for it to be sent again.
// State machine (Coordinator::on_report, the one place it lives):
//   idle --report--> judging: read the wait-for graph of the group from the detector.
//     roots found, dropping pays  --> rebuild: verdicts, back to idle
//     root found, keeping pays    --> kept: its deadlines stretch, recorded, back to idle
//                                     (a probe's or a late transfer's bound on its
//                                     slowdown only drops; keeping needs a pace: whole
//                                     steps, a computation, late transfers' rates)
//     transfers broke, every member
//     answers, every route up      --> redo: the same members in a new group, back to idle
//     late transfers all cross a
//     link that cuts no rank off   --> recorded (once per epoch), nobody dropped, back to idle
//     nothing late (unfounded)    --> idle (nobody is told anything: it cost nothing)
//     ambiguous, the same pair as an
//     earlier window, one late transfer
//     between them                --> probes across each end's own link (rule 5b): one
//                                     late names its end's side, judged as a root above;
//                                     otherwise on as ambiguous
//     ambiguous                   --> recorded; judged again after a second window; still
//                                     ambiguous: nobody dropped, back to idle; a transfer
//                                     broke on a link down between the candidates: the
//                                     link awaited (its patience), then redo or stop
//   slow pair --> probes across both ends' own links (rule 5b); one slow names its side,
//            dropped if dropping pays, back to idle
//   undelivered --> a resender sends the worker's last verdict again once the way to it is
//            up (checked at doubling intervals, for up to recovery.timeout x a round's
//            nominal time, the patience for the coordinator's own link). The worker waits
//            twice that (the last try has time to arrive); past it, it is cut off and leaves
//            (a member gone, dropped at the next report). Served even after the run stopped:
//            its verdicts say leave.
//   join --> admitted at the next round nobody has started (a new group), or queued until
//            the rebuild that drops the worker is done. A rebuild before a joiner has the
//            model (its share at that round broken, or not begun) postpones it: it is left
//            out of the new group, not dropped, and admitted again at the round after the
//            one the group resumes.
// Invariants: a member is dropped only as a root of the wait-for graph (dead or cut off
// from the coordinator; busy computing past its deadline while others wait on it; a
// computation over at half its pace or slower; a straggler by progress score not slowed only by other stragglers; or the one end common
// to every late transfer), and, unless dead, only when the prediction says dropping
// pays (a keep is decided on a pace: whole steps, or the rate of late transfers that have
// moved bytes, never on a bound: a probe cut at its deadline, a transfer that has moved
// nothing); only a
// verdict makes a worker abandon an operation; a worker takes itself for cut off only when
// the coordinator gave up resending a verdict it lost, never at the loss itself; mailboxes
// are named per epoch, so no message of an abandoned epoch is ever matched in a new one;
// the group never shrinks below recovery.min_workers (the run stops instead); a group
// resumes only from a round every member has the state of (a joiner without it is
// postponed, never a culprit).
//
// The code: the protocol in coordinator.cpp; how the evidence is read in
// coordinator_links.cpp (heartbeats, links down, who is cut off), coordinator_judge.cpp
// (the wait-for graph, late transfers, slow links, progress scores, the straggler rule),
// coordinator_regroup.cpp (orders that keep off slow links), coordinator_probes.cpp
// (rules 5b, 5c) and coordinator_stops.cpp (the run stops); the class they share in
// coordinator_impl.hpp.
// It meets the engine only through the EnginePort (recovery/engine_port.hpp): the clock,
// links and hosts up or down, probes, timers, and the verdicts it sends. The SimGrid side,
// the coordinator actor that feeds it the reports one by one, is sim/recovery_adapter.cpp.
#include <memory>
#include <vector>

#include "recovery/engine_port.hpp"
#include "recovery/events.hpp"
#include "recovery/membership.hpp"
#include "recovery/run_facts.hpp"

namespace collsim {

class Detector;
namespace coordination {
class Coordinator;
}

class RecoveryCoordinator {
public:
  // It reads the run, the detector's view and the faults applied so far; it decides the
  // membership, tells the detector whom it keeps, and appends its decisions to `decisions`.
  RecoveryCoordinator(const RunFacts& run, Membership& membership, Detector& detector, EnginePort& engine,
                      std::vector<RecoveryEvent>& decisions, const std::vector<FaultEvent>& faults);
  ~RecoveryCoordinator();
  RecoveryCoordinator(const RecoveryCoordinator&) = delete;
  RecoveryCoordinator& operator=(const RecoveryCoordinator&) = delete;

  // A report from the detector, in the order they were sent: it acts on it (this may take
  // simulated time: a second look, probes, a link awaited).
  void on_report(const Report& report);
  // How long it waits for a link to come back, and keeps resending a lost verdict.
  double link_patience() const;

private:
  std::unique_ptr<coordination::Coordinator> impl_;
};

}  // namespace collsim
