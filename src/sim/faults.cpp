#include "sim/faults.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <tuple>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <xbt/config.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "plan/simgrid_guard.hpp"
#include "sim/recovery_adapter.hpp"
#include "sim/worker.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

// Whether the route between two hosts crosses one of `links`, either way.
bool route_crosses_any(sg4::Host* a, sg4::Host* b, const std::vector<sg4::Link*>& links) {
  std::vector<sg4::Link*> route;
  for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    route.clear();
    double latency = 0;
    from->route_to(to, route, &latency);
    for (const sg4::Link* link : route)
      if (std::find(links.begin(), links.end(), link) != links.end()) return true;
  }
  return false;
}

// Whether one of `links` is the first link of the route from `control` to `host` or the
// last of the route back: the control host's own.
bool ends_route(sg4::Host* control, sg4::Host* host, const std::vector<sg4::Link*>& links) {
  std::vector<sg4::Link*> route;
  for (auto [from, to, first] : {std::tuple{control, host, true}, std::tuple{host, control, false}}) {
    route.clear();
    double latency = 0;
    from->route_to(to, route, &latency);
    if (!route.empty() && std::find(links.begin(), links.end(), first ? route.front() : route.back()) != links.end())
      return true;
  }
  return false;
}

// The members a link-down separates from the coordinator: SimGrid's routes are static, so
// a member whose route to or from the control host crosses a link down can take no part
// in a group the coordinator leads, healthy or not (on a torus, every rank whose route
// from the coordinator's host goes through that link). When those are most of the group,
// the link is the coordinator's own lost contact, and the members cut off are those on its
// side whose routes to the others cross it (as the coordinator judges, recovery/coordinator_links.cpp).
// Otherwise a member behind the link that another member reaches both ways, itself clear of
// it, gets its verdicts through that one (a courier) and is not cut off (issue #48); so too
// behind a switch link (none of the control host's own links) that most members' routes
// from the coordinator cross, when couriers reach every one of them (the coordinator's
// rail's uplink on a DGX preset).
// Read from the platform's routes, not from the coordinator's evidence.
std::vector<int> cut_off_by(const RunState& state, const ResolvedFault& fault) {
  const std::vector<int>& members = state.membership.current().members();
  sg4::Host* control = state.setup.control_host;
  std::vector<int> far, near;
  bool controls_own = false;  // a link down is the first of the control host's route out, or the last of one in
  for (int world : members) {
    sg4::Host* host = state.setup.rank_hosts[static_cast<size_t>(world)];
    if (host != control && route_crosses_any(host, control, fault.links)) {
      far.push_back(world);
      controls_own = controls_own || ends_route(control, host, fault.links);
    } else {
      near.push_back(world);
    }
  }
  // A verdict reaches a member behind the link through a courier (a member both reach:
  // sim/recovery_adapter.cpp): such a member is not cut off.
  std::vector<int> uncouriered = far;
  std::erase_if(uncouriered, [&](int world) {
    sg4::Host* host = state.setup.rank_hosts[static_cast<size_t>(world)];
    return std::any_of(near.begin(), near.end(), [&](int via) {
      sg4::Host* courier = state.setup.rank_hosts[static_cast<size_t>(via)];
      return courier != host && courier != control && courier->is_on() &&
             !route_crosses_any(courier, host, fault.links);
    });
  });
  if (2 * far.size() <= members.size() || (!controls_own && uncouriered.empty())) return uncouriered;
  std::vector<int> cut;
  sg4::Host* beyond = state.setup.rank_hosts[static_cast<size_t>(far.front())];
  for (int world : near)
    if (route_crosses_any(state.setup.rank_hosts[static_cast<size_t>(world)], beyond, fault.links)) cut.push_back(world);
  return cut;
}

void record(RunState& state, const ResolvedFault& fault, const char* action) {
  FaultEvent event;
  event.fault = fault.index;
  event.kind = fault_kind_name(fault.spec.kind);
  event.target = fault.target;
  event.action = action;
  event.time = sg4::Engine::get_clock();
  if (fault.host != nullptr) event.host = fault.host->get_name();
  for (const sg4::Link* link : fault.links) event.links.push_back(link->get_name());
  event.ranks = fault.ranks;
  if (fault.spec.kind == FaultKind::link_down && event.action == "applied") event.cut_off = cut_off_by(state, fault);
  state.record.fault_events.push_back(std::move(event));
}

// The longest a transfer's first latency can last on this platform: every route is at most
// a route into the first worker's host and one out of it (routes are shortest paths). Read
// from SimGrid, not from the run's route cache: the latencies as they are now (a fault may
// have changed them since the cache read a route).
double longest_route_latency(const RunState& state) {
  const std::vector<sg4::Host*>& hosts = state.setup.rank_hosts;
  double in = 0, out = 0;
  std::vector<sg4::Link*> links;
  for (sg4::Host* host : hosts) {
    if (host == hosts.front()) continue;
    for (auto [from, to, longest] : {std::tuple{host, hosts.front(), &in}, std::tuple{hosts.front(), host, &out}}) {
      double latency = 0;
      links.clear();
      from->route_to(to, links, &latency);
      *longest = std::max(*longest, latency);
    }
  }
  return (in + out) * simgrid::config::get_value<double>("network/latency-factor");
}

// SimGrid 3.32 freezes a transfer whose route's latency changes while it is still in its
// first latency: set_latency gives its variable a share at once, so that when the latency
// is paid nothing changes in the max-min system, and the transfer is never scheduled to
// end. Setting a link's bandwidth again (to the same value) reschedules every transfer
// across it: done once every transfer that was in its first latency has paid it (the
// longest route latency before the change later). Such a transfer waits at most that long;
// nothing else changes (the link's record of bandwidth changes skips a value that did not
// change).
void release_after_latency_change(const RunState& state, const std::vector<sg4::Link*>& links, double wait) {
  sg4::Actor::create("latency-change", state.setup.control_host, [links, wait] {
    sg4::this_actor::sleep_for(wait);
    for (sg4::Link* link : links) link->set_bandwidth(link->get_bandwidth());
  })->daemonize();
}

// Links as they were before a slow-link fault (bandwidth, latency), to restore them after
// its duration: kept by the injector that undoes it, so nothing outlives the run.
using SavedLinks = std::vector<std::pair<double, double>>;

SavedLinks apply(RunState& state, const ResolvedFault& fault) {
  SavedLinks saved;
  const bool first = state.recovery && state.recovery->fault_struck();
  // (replay: the network changes now, and back when the fault ends)
  if (state.replay) state.replay->fault_changed(+1, fault.spec.duration ? sg4::Engine::get_clock() + *fault.spec.duration : -1);
  switch (fault.spec.kind) {
    case FaultKind::slow_link: {
      const double first_latency = fault.spec.latency ? longest_route_latency(state) : 0;
      for (sg4::Link* link : fault.links) {
        saved.emplace_back(link->get_bandwidth(), link->get_latency());
        link->set_bandwidth(link->get_bandwidth() * fault.spec.factor);
        if (fault.spec.latency) link->set_latency(*fault.spec.latency);
      }
      if (fault.spec.latency) release_after_latency_change(state, fault.links, first_latency);
      break;
    }
    case FaultKind::link_down:
      for (sg4::Link* link : fault.links) link->turn_off();
      break;
    case FaultKind::slow_host:
      for (int rank : fault.ranks) state.host_speed_factor[static_cast<size_t>(rank)] *= fault.spec.factor;
      break;
    case FaultKind::preempt:
      for (int rank : fault.ranks) {
        WorkerState& worker = state.workers[static_cast<size_t>(rank)];
        worker.fate = WorkerFate::preempted;
        worker.fate_time = sg4::Engine::get_clock();
        // The bucket's collective this rank was in ends here, abandoned (its actor dies).
        if (worker.bucket >= 0 && !worker.in_flight.abandoned && rank < max_activity_ranks) {
          Activity cut = worker.in_flight;
          cut.end = worker.fate_time;
          cut.abandoned = true;
          state.record.activities.push_back(cut);
        }
      }
      record(state, fault, "applied");
      fault.host->turn_off();  // kills the workers on it, and a parameter server's process
      if (state.recovery) state.recovery->servers_lost_with(fault.host);  // the others take over
      if (state.recovery) let_the_group_go_if_done(state);  // they may have been the last still training
      if (first) state.recovery->watch_waits_under_way();
      return saved;
  }
  record(state, fault, "applied");
  // The waits begun before the first fault had no deadline: from now on they do.
  if (first) state.recovery->watch_waits_under_way();
  return saved;
}

void undo(RunState& state, const ResolvedFault& fault, const SavedLinks& saved) {
  if (state.replay && fault.spec.kind != FaultKind::preempt) state.replay->fault_changed(-1);
  switch (fault.spec.kind) {
    case FaultKind::slow_link: {
      const double first_latency = fault.spec.latency ? longest_route_latency(state) : 0;
      for (size_t i = 0; i < fault.links.size(); ++i) {
        fault.links[i]->set_bandwidth(saved[i].first);
        if (fault.spec.latency) fault.links[i]->set_latency(saved[i].second);
      }
      if (fault.spec.latency) release_after_latency_change(state, fault.links, first_latency);
      break;
    }
    case FaultKind::link_down:
      for (sg4::Link* link : fault.links) link->turn_on();
      break;
    case FaultKind::slow_host:
      for (int rank : fault.ranks) state.host_speed_factor[static_cast<size_t>(rank)] /= fault.spec.factor;
      break;
    case FaultKind::preempt:
      return;
  }
  record(state, fault, "undone");
  if (state.recovery && !fault.links.empty()) state.recovery->links_back(fault.links);  // a detoured NIC back
}

// The preempted host comes back; its workers start again and ask to rejoin.
void bring_back(RunState& state, const ResolvedFault& fault) {
  fault.host->turn_on();
  record(state, fault, "returned");
  for (int rank : fault.ranks)
    sg4::Actor::create(fmt::format("rank-{}", rank), fault.host, [shared = state.shared_from_this(), rank] { run_returning_worker(*shared, rank); });
}

// An actor on the control host: waits `delay`, applies the fault if asked, and undoes
// it after its duration.
void start_injector(RunState& state, const ResolvedFault& fault, double delay, bool apply_first,
                    SavedLinks saved = {}) {
  sg4::ActorPtr injector = sg4::Actor::create(
      fmt::format("fault-{}", fault.index), state.setup.control_host, [shared = state.shared_from_this(), fault, delay, apply_first, saved]() mutable {
        RunState& state = *shared;
        if (delay > 0) sg4::this_actor::sleep_for(delay);
        if (apply_first) saved = apply(state, fault);
        if (fault.spec.return_after) {
          sg4::this_actor::sleep_for(*fault.spec.return_after);
          bring_back(state, fault);
        }
        if (!fault.spec.duration) return;
        sg4::this_actor::sleep_for(*fault.spec.duration);
        undo(state, fault, saved);
      });
  injector->daemonize();  // the run ends when the workers do, whatever faults are still pending
}

}  // namespace

std::vector<ResolvedFault> arm_faults(const std::vector<PlannedFault>& planned) {
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  std::vector<ResolvedFault> faults;
  for (const PlannedFault& fault : planned) {
    ResolvedFault armed{fault.spec, fault.index, fault.target, {}, nullptr, fault.ranks};
    for (const std::string& name : fault.links) armed.links.push_back(engine.link_by_name(name));
    if (!fault.host.empty()) armed.host = engine.host_by_name(fault.host);
    faults.push_back(std::move(armed));
  }
  return faults;
}

void start_fault_injectors(RunState& state, const std::vector<ResolvedFault>& faults) {
  auto round_faults = std::make_shared<std::vector<ResolvedFault>>();
  for (const ResolvedFault& fault : faults) {
    if (fault.spec.at) start_injector(state, fault, *fault.spec.at, true);
    else round_faults->push_back(fault);
  }
  state.round_faults = std::move(round_faults);
}

bool announce_round(RunState& state, int round) {
  if (!state.membership.announce_round(round)) return false;
  if (progress_enabled())
    progress_line(fmt::format("round {} of 0..{} starts at {} simulated", round, state.setup.plan->scenario.training.rounds - 1,
                              format_time(sg4::Engine::get_clock())));
  if (!state.round_faults) return true;
  // Faults of this round strike now, before any of its work: slowdowns at once from the
  // announcing worker; preemptions from the control host (the announcing worker may be
  // one of the victims).
  for (const ResolvedFault& fault : *state.round_faults) {
    if (*fault.spec.at_round != round) continue;
    if (fault.spec.kind == FaultKind::preempt) {
      start_injector(state, fault, 0, true);
    } else {
      SavedLinks saved = apply(state, fault);
      if (fault.spec.duration) start_injector(state, fault, 0, false, std::move(saved));
    }
  }
  return true;
}

}  // namespace collsim
