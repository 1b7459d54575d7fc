#pragma once
// Recovery (recovery/) on SimGrid, for recovery.policy "rebuild": the one place where the
// two meet. Three parts, each thin:
//   - the watch over the groups' waits (comm's WaitWatch): each event goes to the detector;
//   - the EnginePort: SimGrid's clock, links, hosts, transfers, probes and timers, and the
//     verdicts' way to the workers (a mailbox per rank and incarnation, a courier when the
//     worker shares the coordinator's host, resent when lost on the way);
//   - the coordinator actor on the control host, which hands it the detector's reports in order.
// The workers tell it what they do outside waits (computing, idle, joins, verdicts read).
#include <deque>
#include <functional>
#include <memory>
#include <utility>
#include <simgrid/forward.h>
#include <vector>

#include "comm/comm_group.hpp"
#include "recovery/detector.hpp"
#include "recovery/engine_port.hpp"
#include "recovery/run_facts.hpp"

namespace collsim {

struct RunState;
class RecoveryCoordinator;

class RecoveryAdapter final : public WaitWatch, public EnginePort {
public:
  // Reads the run's setup (the platform is built, the ranks placed, the engine's options set).
  explicit RecoveryAdapter(RunState& state);
  ~RecoveryAdapter() override;

  Detector& detector() { return detector_; }
  const Detector& detector() const { return detector_; }
  // Starts the coordinator actor on the run's control host (it runs until the engine ends).
  void start_coordinator();

  // WaitWatch: the groups' waits (comm/comm_group.hpp).
  void posted(int world, int peer, bool receive) override { detector_.posted(world, peer, receive); }
  void finished(int world, int peer, bool receive) override { detector_.finished(world, peer, receive); }
  double begin_wait(int world, int peer, double bytes, bool receive, simgrid::s4u::Comm* activity, const char* phase,
                    int step) override {
    return detector_.begin_wait(world, peer, bytes, receive, TransferRef{activity}, phase, step);
  }
  double suspect(int world) override { return detector_.suspect(world); }
  simgrid::s4u::Comm* listen(int world) override;
  simgrid::s4u::Comm* listen_from_start(int world) override {
    return detector_.faults_struck() ? listen(world) : nullptr;
  }
  bool unwatched(int /*world*/) override { return unwatched_ && !detector_.faults_struck(); }
  // A fault strikes (true: the first). Then, once it is in place, watch_waits_under_way:
  // the waits begun before it, with no deadline, get theirs from one watchdog.
  bool fault_struck() {
    detector_.fault_struck();
    return !std::exchange(struck_, true);
  }
  void watch_waits_under_way();
  // A fault on `links` was undone (sim/faults.cpp): a GPU detoured for its NIC takes its
  // own NIC again once both its halves are up at their bandwidth as built.
  void links_back(const std::vector<simgrid::s4u::Link*>& links);
  void end_wait(int world) override { detector_.end_wait(world); }
  // `host` was preempted: each parameter server's process on it is lost, and the coordinator
  // hears of it at once (Report::Kind::server_lost): the group goes on with the servers left.
  void servers_lost_with(const simgrid::s4u::Host* host);
  void server_transfer_broke(int world, int peer, int epoch) override;

  // The workers' side of the verdicts. A new worker on `world` (its host came back) asks
  // to rejoin: it is a new incarnation of the rank, and what the killed one left behind (a
  // verdict receive that SimGrid cancelled with its actor, verdicts sent to it and never
  // read) is not its own.
  void join(int world);
  // The verdict for `world`: the last one sent (those before it, overridden by a later
  // rebuild, are read and set aside; blocking until it arrives). A verdict that fails to
  // cross (a link on its way went down) says nothing of the worker: when it is the last
  // one sent, the worker reports it undelivered and waits for it to be sent again, for
  // twice the resend patience (the coordinator's last try has time to arrive); past that
  // it is cut off, and the verdict is leave.
  Verdict take_verdict(int world);
  // A parameter server's process (endpoint world size + s): the news of the group it serves
  // next, the last one the coordinator sent (blocking until one arrives: one a wait of its
  // heard, or the next rebuild's). Its waits listen to the same channel (listen(endpoint)).
  Verdict take_news(int endpoint);
  // `world` leaves the run or finishes: its pending verdict receive is withdrawn.
  void retire(int world);

  // EnginePort: what recovery asks of SimGrid (recovery/engine_port.hpp).
  double now() const override;
  double transfer_start(TransferRef transfer) const override;
  double transfer_finish(TransferRef transfer) const override;
  double transfer_remaining(TransferRef transfer) const override;
  bool transfer_completed(TransferRef transfer) const override;
  LinkRef link(int network_id) const override;
  bool link_up(LinkRef link) const override;
  std::string link_name(LinkRef link) const override;
  bool host_up(int world) const override;
  std::vector<LinkRef> heartbeat_route(int world) const override;
  WorkerFate fate(int world) const override;
  int bucket(int world) const override;
  void report(const Report& report) override;
  void sleep(double seconds) override;
  ProbeOutcome probe(int from, int to, double bytes, double expected, double deadline) override;
  std::shared_ptr<CommGroup> new_group(int epoch, std::vector<int> members) override;
  void send_verdict(int world, Verdict verdict) override;
  void regrouped(const std::shared_ptr<CommGroup>& next, int resume_round) override;
  void servers_left(const std::vector<int>& servers) override;
  void wake_waiting(int world) override;
  bool verdict_lost(int world) const override { return lost_[static_cast<size_t>(world)]; }
  int incarnation(int world) const override { return incarnations_[static_cast<size_t>(world)]; }
  void resend_verdict(int world) override;
  void beside(std::function<void()> attempt) override;
  bool courier_available(int world) const override { return courier_for(world) >= 0; }
  NicDetour nic_detour(int world) const override;
  void detour_nic(int world, int relay) override;
  double priced_with_detours(const std::vector<std::pair<int, int>>& detours,
                             const std::function<double()>& price) override;
  void check_at(int world, double since, double time, double until) override;

private:
  simgrid::s4u::CommPtr verdict_channel(int world);
  simgrid::s4u::Mailbox* verdict_mailbox(int world) const;
  const simgrid::s4u::Host* server_host(int endpoint) const;
  void tell(int world, Verdict* letter);
  int courier_for(int world) const;
  bool control_reaches(int world) const;
  bool reachable(int from, int to) const;
  Report next_report();

  RunState& state_;
  RunFacts facts_;
  Detector detector_;
  std::unique_ptr<RecoveryCoordinator> coordinator_;
  // The reports on their way to the coordinator.
  std::deque<Report> reports_;
  simgrid::s4u::SemaphorePtr pending_;
  // The verdicts' post, by world rank.
  std::vector<simgrid::s4u::CommPtr> verdict_gets_;
  // Waits may go without a deadline until the first fault (WaitWatch::unwatched): not with
  // concurrent streams, whose actors come and go (a verdict channel posted by one that
  // ended would never be answered).
  bool unwatched_ = true;
  bool struck_ = false;
  std::vector<Verdict*> verdicts_;
  std::vector<long> verdicts_sent_, verdicts_taken_;  // in its current incarnation
  std::vector<Verdict*> last_letters_;                // the last verdict sent
  std::vector<bool> lost_;                            // its last verdict did not cross
  std::vector<int> incarnations_;                     // workers started on it after the first
  std::vector<std::unique_ptr<Verdict>> letters_;     // every verdict sent (one never read frees nothing)
  int probe_serial_ = 0;                              // names the probes' mailboxes
  std::vector<int> servers_left_;                     // after a server was lost: those left (empty: all)
};

}  // namespace collsim
