#pragma once
// Recovery's one door to the engine: everything recovery asks of it, and the way its
// verdicts go out. The engine's side of the conversation comes in through the detector
// (recovery/detector.hpp: transfers posted and finished, waits, computations, failures,
// joins) and the coordinator (Coordinator::on_report). sim/recovery_adapter.cpp implements
// this over SimGrid; tests/unit/recovery_test.cpp fakes it, so that recovery's rules run
// without an engine.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "recovery/events.hpp"

namespace collsim {

class CommGroup;

// A transfer a rank waits on, as the engine knows it (opaque to recovery).
struct TransferRef {
  const void* id = nullptr;
  explicit operator bool() const { return id != nullptr; }
};

// A link of the platform (opaque to recovery; equal refs are the same link). Links on the
// ranks' routes have a network id (ModelInput::network's numbering) too: EnginePort::link.
struct LinkRef {
  const void* id = nullptr;
  bool operator==(const LinkRef& other) const { return id == other.id; }
};

// A probe's outcome (recovery rule 5b, recovery/link_probe.hpp).
struct ProbeOutcome {
  double expected = 0;  // seconds the probe should take (the detector's expectation)
  double took = 0;      // seconds it took, or the deadline if it did not end by then
  bool late = false;    // not over by its deadline (it is then cancelled)
};

// A GPU whose own NIC fails (rail:, the DGX presets: one NIC per GPU) can stay in the
// group, its traffic to other nodes through a node mate's NIC over NVLink (EnginePort::
// nic_detour, detour_nic; docs/recovery.md, "A GPU kept when only its NIC fails").
struct NicDetour {
  std::vector<LinkRef> nic;  // the GPU's NIC, both halves (empty: no such detour on this platform)
  std::vector<int> relays;   // world ranks on its node whose own NIC carries their traffic and is up
};

class EnginePort {
public:
  virtual ~EnginePort() = default;

  // The simulated clock (seconds).
  virtual double now() const = 0;

  // A transfer's progress: when it started (-1: its peer has not posted its side yet),
  // when it ended (-1: not yet), the bytes it has left, and whether it completed (not
  // abandoned).
  virtual double transfer_start(TransferRef transfer) const = 0;
  virtual double transfer_finish(TransferRef transfer) const = 0;
  virtual double transfer_remaining(TransferRef transfer) const = 0;
  virtual bool transfer_completed(TransferRef transfer) const = 0;

  // Links and hosts now (faults turn them off and on).
  virtual LinkRef link(int network_id) const = 0;
  virtual bool link_up(LinkRef link) const = 0;
  bool link_up(int network_id) const { return link_up(link(network_id)); }
  virtual std::string link_name(LinkRef link) const = 0;
  virtual bool host_up(int world) const = 0;
  // The links between the control host and `world`'s host, both ways (the heartbeats' way).
  virtual std::vector<LinkRef> heartbeat_route(int world) const = 0;

  // The workers: where each is in its life, and the layered training bucket whose
  // collective it is in (-1: none).
  virtual WorkerFate fate(int world) const = 0;
  virtual int bucket(int world) const = 0;

  // A detector's report for the coordinator (it reads them in order, Coordinator::on_report).
  virtual void report(const Report& report) = 0;

  // The coordinator acts. It waits (its second look, a link it awaits), measures a link
  // with a probe transfer of `bytes` from `from` to `to`, forms a group, and sends a
  // verdict (the worker reads it at its next wait, or now if it waits for the group).
  virtual void sleep(double seconds) = 0;
  virtual ProbeOutcome probe(int from, int to, double bytes, double expected, double deadline) = 0;
  virtual std::shared_ptr<CommGroup> new_group(int epoch, std::vector<int> members) = 0;
  virtual void send_verdict(int world, Verdict verdict) = 0;
  // The group was rebuilt (`next` resumes at `resume_round`): the parameter servers' processes
  // (RunFacts::servers), which serve whichever group pushes, hear of it too.
  virtual void regrouped(const std::shared_ptr<CommGroup>& /*next*/, int /*resume_round*/) {}
  // The parameter servers' processes left (their indices as planned, in order) after some
  // were lost: the groups formed from now on are served by them alone, and only they hear
  // of a rebuild.
  virtual void servers_left(const std::vector<int>& /*servers*/) {}
  // A worker done with the last round waits for the others (or a verdict): it reads its
  // verdict now.
  virtual void wake_waiting(int world) = 0;
  // A verdict that did not cross (Report::Kind::undelivered): whether `world`'s worker still
  // waits for it, and sending it again. `attempt` runs on the control host beside the
  // coordinator, from now until it returns (it may sleep).
  virtual bool verdict_lost(int world) const = 0;
  virtual int incarnation(int world) const = 0;
  virtual void resend_verdict(int world) = 0;
  virtual void beside(std::function<void()> attempt) = 0;
  // A worker on the control host, or one the control host cannot reach (a link down on the
  // way), gets its verdicts through another host (a courier): false when no host can carry
  // one to it now.
  virtual bool courier_available(int world) const = 0;
  // A GPU's NIC and the node mates that could carry its traffic to other nodes instead
  // (nothing when its own NIC does not carry it any more, or the platform has no NIC per
  // GPU), and the detour itself: from the next transfer on, `world`'s traffic to other
  // nodes leaves and enters through `relay`'s NIC over NVLink; the routes recovery reads
  // (RunFacts::network) follow.
  virtual NicDetour nic_detour(int /*world*/) const { return {}; }
  virtual void detour_nic(int /*world*/, int /*relay*/) {}
  // `price()` read on the routes the detours (world, relay) would give, which are undone
  // after: what a detour costs before it is taken (a mate's NIC shared with its own traffic,
  // the hops it adds).
  virtual double priced_with_detours(const std::vector<std::pair<int, int>>& /*detours*/,
                                     const std::function<double()>& price) {
    return price();
  }
  // `world`'s wait is to be checked at `time` (Detector::suspect), before its own timer
  // at `until`: its deadline moved up once the instant it began in was over
  // (Detector::settle). Someone beside the worker checks it then, and at each next check
  // before `until`, while the same wait (begun at `since`) is on.
  virtual void check_at(int /*world*/, double /*since*/, double /*time*/, double /*until*/) {}
};

}  // namespace collsim
