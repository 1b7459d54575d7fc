#include "sim/recovery_adapter.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <xbt/config.hpp>

#include "model/route_cache.hpp"
#include "platform/rail_zone.hpp"
#include "recovery/coordinator.hpp"
#include "sim/run_state.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

namespace {

// What recovery knows of the run, from its setup (the control host is chosen later:
// start_coordinator).
RunFacts facts_of(const RunSetup& setup) {
  RunFacts facts;
  facts.scenario = setup.scenario;
  facts.algorithm = setup.algorithm;
  facts.model = setup.plan->model;
  facts.rank_localities = setup.plan->locality.ids;
  for (const sg4::Host* host : setup.rank_hosts) facts.rank_hosts.emplace_back(host->get_name());
  facts.host_speed = setup.rank_hosts.front()->get_speed();
  facts.zero3 = setup.plan->training.zero3.has_value();
  for (const SwitchPlan& server : setup.plan->switches)
    if (server.kind == SwitchKind::server) {
      ++facts.servers;
      facts.server_hosts.push_back(server.host);
    }
  // The network model's own corrections, so that expected times are those SimGrid gives.
  facts.solver.latency_factor = simgrid::config::get_value<double>("network/latency-factor");
  facts.solver.bandwidth_factor = simgrid::config::get_value<double>("network/bandwidth-factor");
  facts.solver.tcp_gamma = simgrid::config::get_value<double>("network/TCP-gamma");
  facts.solver.cross_traffic = simgrid::config::get_value<bool>("network/crosstraffic");
  facts.solver.weight_s = simgrid::config::get_value<double>("network/weight-S");
  facts.solver.precision = simgrid::config::get_value<double>("surf/precision");
  return facts;
}

// The rail zone that holds `host` as a GPU (rail:, the DGX presets), or nullptr.
RailZone* rail_zone_of(const sg4::Host* host) {
  return dynamic_cast<RailZone*>(host->get_englobing_zone()->get_impl());
}

const sg4::Comm* comm_of(TransferRef transfer) { return static_cast<const sg4::Comm*>(transfer.id); }
const sg4::Link* link_of(LinkRef link) { return static_cast<const sg4::Link*>(link.id); }

}  // namespace

RecoveryAdapter::RecoveryAdapter(RunState& state)
    : state_(state), facts_(facts_of(state.setup)), detector_(facts_, state.membership, *this),
      pending_(sg4::Semaphore::create(0)), verdict_gets_(static_cast<size_t>(facts_.endpoints())),
      verdicts_(static_cast<size_t>(facts_.endpoints()), nullptr),
      verdicts_sent_(static_cast<size_t>(facts_.endpoints()), 0),
      verdicts_taken_(static_cast<size_t>(facts_.endpoints()), 0),
      last_letters_(static_cast<size_t>(facts_.endpoints()), nullptr),
      lost_(static_cast<size_t>(facts_.endpoints()), false),
      incarnations_(static_cast<size_t>(facts_.endpoints()), 0) {
  unwatched_ = state.setup.scenario->training.streams <= 1;
}

RecoveryAdapter::~RecoveryAdapter() = default;

void RecoveryAdapter::start_coordinator() {
  const RunSetup& setup = state_.setup;
  facts_.control_host = setup.control_host->get_name();
  const auto on_control = std::find(setup.rank_hosts.begin(), setup.rank_hosts.end(), setup.control_host);
  if (on_control != setup.rank_hosts.end()) facts_.control_rank = static_cast<int>(on_control - setup.rank_hosts.begin());
  // It waits for reports forever (the run ends with the workers); the state outlives it.
  auto run = [shared = state_.shared_from_this(), this] {
    coordinator_ = std::make_unique<RecoveryCoordinator>(facts_, shared->membership, detector_, *this,
                                                         shared->record.recoveries, shared->record.fault_events);
    for (;;) coordinator_->on_report(next_report());
  };
  sg4::Actor::create("coordinator", setup.control_host, run)->daemonize();
}

Report RecoveryAdapter::next_report() {
  pending_->acquire();
  Report report = reports_.front();
  reports_.pop_front();
  return report;
}

void RecoveryAdapter::report(const Report& report) {
  reports_.push_back(report);
  pending_->release();
}

double RecoveryAdapter::now() const { return sg4::Engine::get_clock(); }

double RecoveryAdapter::transfer_start(TransferRef transfer) const { return comm_of(transfer)->get_start_time(); }
double RecoveryAdapter::transfer_finish(TransferRef transfer) const { return comm_of(transfer)->get_finish_time(); }
double RecoveryAdapter::transfer_remaining(TransferRef transfer) const { return comm_of(transfer)->get_remaining(); }
bool RecoveryAdapter::transfer_completed(TransferRef transfer) const {
  return comm_of(transfer)->get_state() == sg4::Activity::State::FINISHED;
}

LinkRef RecoveryAdapter::link(int network_id) const {
  return LinkRef{routes_of(state_.setup.plan->model).simgrid_link(network_id)};
}
bool RecoveryAdapter::link_up(LinkRef link) const { return link_of(link)->is_on(); }
std::string RecoveryAdapter::link_name(LinkRef link) const { return link_of(link)->get_name(); }
// (A parameter server's process, endpoint world size + s, as the workers' peer: its host.)
bool RecoveryAdapter::host_up(int world) const {
  if (world >= facts_.world_size()) return server_host(world)->is_on();
  return state_.setup.rank_hosts[static_cast<size_t>(world)]->is_on();
}

const sg4::Host* RecoveryAdapter::server_host(int endpoint) const {
  const SwitchPlan& server = state_.setup.plan->switches.at(static_cast<size_t>(endpoint - facts_.world_size()));
  return sg4::Engine::get_instance()->host_by_name(server.host);
}

// From the run's route cache when a worker shares the control host, from SimGrid otherwise
// (the route cache's endpoints are the workers' hosts).
std::vector<LinkRef> RecoveryAdapter::heartbeat_route(int world) const {
  std::vector<LinkRef> links;
  if (facts_.control_rank >= 0) {
    const RouteCache& routes = routes_of(state_.setup.plan->model);
    const int control = facts_.control_rank;
    for (const NetworkRoute* route : {&routes.route(control, world), &routes.route(world, control)})
      for (int id : route->links) links.push_back(LinkRef{routes.simgrid_link(id)});
    return links;
  }
  sg4::Host* host = state_.setup.rank_hosts[static_cast<size_t>(world)];
  sg4::Host* control = state_.setup.control_host;
  for (auto [from, to] : {std::pair{control, host}, std::pair{host, control}}) {
    std::vector<sg4::Link*> route;
    double latency = 0;
    from->route_to(to, route, &latency);
    for (const sg4::Link* link : route) links.push_back(LinkRef{link});
  }
  return links;
}

// A parameter server's process runs while its host is up (a preempted one is lost, and the
// group regroups onto the servers left: servers_lost_with); it reduces no bucket of its own.
WorkerFate RecoveryAdapter::fate(int world) const {
  if (world >= facts_.world_size()) return WorkerFate::running;
  return state_.workers[static_cast<size_t>(world)].fate;
}
int RecoveryAdapter::bucket(int world) const {
  return world >= facts_.world_size() ? -1 : state_.workers[static_cast<size_t>(world)].bucket;
}

void RecoveryAdapter::sleep(double seconds) { sg4::this_actor::sleep_for(seconds); }

void RecoveryAdapter::beside(std::function<void()> attempt) {
  sg4::Actor::create("resender", state_.setup.control_host, std::move(attempt))->daemonize();
}

// After a parameter server was lost, the group's server peers are those left, in planned
// order: peer size() + i is the i-th server left (Coordinator::lose_servers).
std::shared_ptr<CommGroup> RecoveryAdapter::new_group(int epoch, std::vector<int> members) {
  std::shared_ptr<CommGroup> group = state_.new_group(epoch, std::move(members));
  if (servers_left_.empty()) return group;
  std::vector<SwitchPort> ports;
  for (int s : servers_left_) ports.push_back(group->switches().at(static_cast<size_t>(s)));
  group->set_switches(std::move(ports));
  return group;
}

// Sends `bytes` from `from` to `to` (two actors of their own, on those hosts, meeting at
// mailbox "probe-<serial>") and waits for the end or `deadline` seconds, whichever comes
// first. Blocks the calling actor (the coordinator).
ProbeOutcome RecoveryAdapter::probe(int from, int to, double bytes, double expected, double deadline) {
  static const char payload = 0;  // what the probe carries does not matter, its size does
  sg4::Mailbox* box = sg4::Mailbox::by_name(fmt::format("probe-{}", probe_serial_++));
  auto took = std::make_shared<double>(-1);
  // The sender gives up with the receiver: a cancelled transfer throws on both sides.
  sg4::Actor::create("probe-send", state_.setup.rank_hosts[static_cast<size_t>(from)], [box, bytes] {
    try {
      box->put(const_cast<char*>(&payload), static_cast<uint64_t>(bytes));
    } catch (const simgrid::Exception&) {
    }
  })->daemonize();
  sg4::ActorPtr receiver = sg4::Actor::create("probe-receive", state_.setup.rank_hosts[static_cast<size_t>(to)],
                                              [box, deadline, took] {
                                                const double start = sg4::Engine::get_clock();
                                                try {
                                                  box->get<char>(deadline);
                                                  *took = sg4::Engine::get_clock() - start;
                                                } catch (const simgrid::Exception&) {
                                                }
                                              });
  receiver->daemonize();
  receiver->join();
  ProbeOutcome outcome;
  outcome.expected = expected;
  outcome.late = *took < 0;
  outcome.took = outcome.late ? deadline : *took;
  return outcome;
}

// Verdicts queue in the worker's mailbox, in order; the adapter counts them so that the
// worker acts on the last one only (a group rebuilt twice before it read the first).
void RecoveryAdapter::send_verdict(int world, Verdict verdict) {
  letters_.push_back(std::make_unique<Verdict>(std::move(verdict)));
  Verdict* letter = letters_.back().get();
  ++verdicts_sent_[static_cast<size_t>(world)];
  last_letters_[static_cast<size_t>(world)] = letter;
  tell(world, letter);
}

void RecoveryAdapter::resend_verdict(int world) {
  Verdict* letter = last_letters_[static_cast<size_t>(world)];
  ++verdicts_sent_[static_cast<size_t>(world)];
  tell(world, letter);
}

void RecoveryAdapter::wake_waiting(int world) {
  if (const auto& waiting = state_.workers[static_cast<size_t>(world)].waiting_for_the_group) waiting->release();
}

// The parameter servers' news of a rebuilt group: a letter to each one left, on their verdict
// channels (endpoints after the workers'), from the coordinator's host like a verdict. (Recovery with
// servers handles workers' preemptions only, scenario/parameter_server_spec.cpp: their way
// is up.)
void RecoveryAdapter::regrouped(const std::shared_ptr<CommGroup>& next, int resume_round) {
  for (int endpoint = facts_.world_size(); endpoint < facts_.endpoints(); ++endpoint) {
    const int server = endpoint - facts_.world_size();
    if (!servers_left_.empty() && std::find(servers_left_.begin(), servers_left_.end(), server) == servers_left_.end())
      continue;  // lost: nobody reads its news
    letters_.push_back(std::make_unique<Verdict>(Verdict{false, next, resume_round, false}));
    ++verdicts_sent_[static_cast<size_t>(endpoint)];
    verdict_mailbox(endpoint)->put_init(letters_.back().get(), control_message_bytes)->detach();
  }
}

// Recovery's model of the group's collective (its expected rounds, the straggler rule's
// prices) counts the servers left from now on, as the algorithm does.
void RecoveryAdapter::servers_left(const std::vector<int>& servers) {
  servers_left_ = servers;
  const std::vector<int>& planned = state_.setup.plan->model.switch_endpoints;
  facts_.model.switch_endpoints.clear();
  for (int s : servers) facts_.model.switch_endpoints.push_back(planned.at(static_cast<size_t>(s)));
  facts_.model.servers = static_cast<int>(servers.size());
}

void RecoveryAdapter::servers_lost_with(const sg4::Host* host) {
  for (int s = 0; s < facts_.servers; ++s)
    if (facts_.server_hosts[static_cast<size_t>(s)] == host->get_name())
      detector_.server_lost(facts_.world_size() + s);
}

// A server's transfer broke in the current group (its worker lost: the survivors wait on
// the server, not on it, or are done with the last round and wait for the group); one of an
// abandoned group (a survivor left it for the new one) says nothing.
void RecoveryAdapter::server_transfer_broke(int world, int peer, int epoch) {
  if (epoch == state_.membership.current().epoch()) detector_.failed(world, peer);
}

Verdict RecoveryAdapter::take_news(int endpoint) {
  const auto e = static_cast<size_t>(endpoint);
  const Verdict* news = nullptr;
  do {  // the last one sent overrides those before it
    verdict_channel(endpoint)->wait();
    news = verdicts_[e];
    verdicts_[e] = nullptr;
    verdict_gets_[e] = nullptr;
  } while (++verdicts_taken_[e] < verdicts_sent_[e]);
  return *news;
}

void RecoveryAdapter::tell(int world, Verdict* letter) {
  sg4::Mailbox* mailbox = verdict_mailbox(world);
  const int via = facts_.on_control_host(world) || !control_reaches(world) ? courier_for(world) : -1;
  if (via < 0) {
    // Detached: the coordinator must not block on a worker; a dead worker never reads it.
    mailbox->put_init(letter, control_message_bytes)->detach();
    return;
  }
  sg4::Actor::create("courier", state_.setup.rank_hosts[static_cast<size_t>(via)], [mailbox, letter] {
    mailbox->put_init(letter, control_message_bytes)->detach();
  })->daemonize();
}

// A courier on another host carries the verdict where the control host cannot: to a worker
// that shares the coordinator's host (some platforms, a torus, have no route from a host to
// itself), and to one whose route from the control host crosses a link down, a switch link
// that others' routes avoid (a dragonfly's global link: issue #48; before, every member
// behind it was dropped as cut off). The control host must reach the courier, and the
// courier's host the worker: a verdict sent across a link that is down is lost. The
// letter's first leg, like a report, costs no simulated time (the courier is made on its
// host); the second is a message. The rank whose host carries it (-1: none can).
int RecoveryAdapter::courier_for(int world) const {
  const std::vector<sg4::Host*>& hosts = state_.setup.rank_hosts;
  sg4::Host* to = hosts[static_cast<size_t>(world)];
  for (int via = 0; via < static_cast<int>(hosts.size()); ++via) {
    sg4::Host* host = hosts[static_cast<size_t>(via)];
    if (host != to && host != state_.setup.control_host && host->is_on() && reachable(via, world) &&
        control_reaches(via))
      return via;
  }
  return -1;
}

// Both ways between the control host and `world`'s host are up.
bool RecoveryAdapter::control_reaches(int world) const {
  const std::vector<LinkRef> links = heartbeat_route(world);
  return std::all_of(links.begin(), links.end(), [&](LinkRef link) { return link_up(link); });
}

// Both ways between two ranks' hosts are up (routes from the run's route cache).
bool RecoveryAdapter::reachable(int from, int to) const {
  const RouteCache& routes = routes_of(state_.setup.plan->model);
  for (auto [a, b] : {std::pair{from, to}, std::pair{to, from}})
    for (int link : routes.route(a, b).links)
      if (!routes.simgrid_link(link)->is_on()) return false;
  return true;
}

NicDetour RecoveryAdapter::nic_detour(int world) const {
  NicDetour detour;
  const std::vector<sg4::Host*>& hosts = state_.setup.rank_hosts;
  const sg4::Host* gpu = hosts[static_cast<size_t>(world)];
  const RailZone* zone = rail_zone_of(gpu);
  if (zone == nullptr || !zone->own_nic(gpu->get_netpoint())) return detour;
  auto halves = [&](const sg4::Host* host) {
    const sg4::SplitDuplexLink* nic = zone->nic(host->get_netpoint());
    return std::vector<LinkRef>{LinkRef{nic->get_link_up()}, LinkRef{nic->get_link_down()}};
  };
  detour.nic = halves(gpu);
  for (int mate = 0; mate < static_cast<int>(hosts.size()); ++mate) {
    const sg4::Host* host = hosts[static_cast<size_t>(mate)];
    if (mate == world || !zone->same_node(gpu->get_netpoint(), host->get_netpoint()) ||
        !zone->own_nic(host->get_netpoint()))
      continue;
    const std::vector<LinkRef> nic = halves(host);
    if (std::all_of(nic.begin(), nic.end(), [&](LinkRef half) { return link_up(half); })) detour.relays.push_back(mate);
  }
  return detour;
}

void RecoveryAdapter::detour_nic(int world, int relay) {
  const sg4::Host* gpu = state_.setup.rank_hosts[static_cast<size_t>(world)];
  RailZone* zone = rail_zone_of(gpu);
  const std::vector<sg4::Host*>& hosts = state_.setup.rank_hosts;
  zone->detour_nic(gpu->get_netpoint(), hosts[static_cast<size_t>(relay)]->get_netpoint());
  // Its routes, and those of node mates whose traffic went through its NIC, change.
  const RouteCache& routes = routes_of(state_.setup.plan->model);
  for (int mate = 0; mate < static_cast<int>(hosts.size()); ++mate)
    if (zone->same_node(gpu->get_netpoint(), hosts[static_cast<size_t>(mate)]->get_netpoint()))
      routes.reread_routes_of(mate);
}

// The detours taken for a moment (their routes read), priced, and undone: the zone's
// carriers as they were, the routes of the GPUs of those nodes read again.
double RecoveryAdapter::priced_with_detours(const std::vector<std::pair<int, int>>& detours,
                                            const std::function<double()>& price) {
  if (detours.empty()) return price();
  const std::vector<sg4::Host*>& hosts = state_.setup.rank_hosts;
  RailZone* zone = rail_zone_of(hosts[static_cast<size_t>(detours.front().first)]);
  const std::vector<int> before = zone->carriers();
  auto undo = [&] {
    zone->set_carriers(before);
    const RouteCache& routes = routes_of(state_.setup.plan->model);
    for (auto [world, relay] : detours)
      for (int mate = 0; mate < static_cast<int>(hosts.size()); ++mate)
        if (zone->same_node(hosts[static_cast<size_t>(world)]->get_netpoint(), hosts[static_cast<size_t>(mate)]->get_netpoint()))
          routes.reread_routes_of(mate);
  };
  double seconds = 0;
  try {
    for (auto [world, relay] : detours) detour_nic(world, relay);
    seconds = price();
  } catch (...) {
    undo();
    throw;
  }
  undo();
  return seconds;
}

// The node's own monitor sees its GPU's NIC back (as it saw it down, rule 1): the detour
// ends, and the GPU's traffic to other nodes leaves and enters through its own NIC from the
// next transfer on. Before, the detour stayed for the rest of the run, the node mate's NIC
// carrying two GPUs' traffic. The trace says so with an entry that changes no group.
void RecoveryAdapter::links_back(const std::vector<sg4::Link*>& links) {
  const std::vector<sg4::Host*>& hosts = state_.setup.rank_hosts;
  const RouteCache& routes = routes_of(state_.setup.plan->model);
  for (int world = 0; world < static_cast<int>(hosts.size()); ++world) {
    const sg4::Host* gpu = hosts[static_cast<size_t>(world)];
    RailZone* zone = rail_zone_of(gpu);
    if (zone == nullptr || zone->own_nic(gpu->get_netpoint())) continue;
    const sg4::SplitDuplexLink* nic = zone->nic(gpu->get_netpoint());
    const std::array<sg4::Link*, 2> halves{nic->get_link_up(), nic->get_link_down()};
    auto undone = [&](const sg4::Link* half) { return std::find(links.begin(), links.end(), half) != links.end(); };
    auto back = [&](const sg4::Link* half) {
      return half->is_on() && half->get_bandwidth() >= routes.nominal(half).bandwidth;
    };
    if (std::none_of(halves.begin(), halves.end(), undone) || !std::all_of(halves.begin(), halves.end(), back))
      continue;
    zone->restore_nic(gpu->get_netpoint());
    for (int mate = 0; mate < static_cast<int>(hosts.size()); ++mate)
      if (zone->same_node(gpu->get_netpoint(), hosts[static_cast<size_t>(mate)]->get_netpoint()))
        routes.reread_routes_of(mate);
    RecoveryEvent entry;
    entry.epoch_before = entry.epoch_after = state_.membership.current().epoch();
    entry.round = state_.workers[static_cast<size_t>(world)].round;
    entry.detected = entry.rebuilt = now();
    entry.group = state_.membership.current().members();
    entry.kept_ranks = {world};
    entry.rule = "a detoured GPU's NIC is back";
    entry.reason = fmt::format("{}'s NIC {} is back: its traffic to other nodes through its own NIC again", world,
                               nic->get_name());
    state_.record.recoveries.push_back(std::move(entry));
  }
}

sg4::Comm* RecoveryAdapter::listen(int world) { return verdict_channel(world).get(); }

// The first fault struck: the waits under way began with no deadline (nothing could stall
// them then). One watchdog on the control host keeps each one's deadline from its start,
// as the wait would have: it checks the wait there (Detector::suspect: a report, perhaps)
// and again when suspect says, until the wait is over. A verdict reaches the worker by the
// verdict channel its wait listens to. Nothing has to wake the worker: cancelling a receive
// that no sender matched (an alarm) does not end a wait on it in SimGrid 3.32, and a rank
// waiting on a preempted peer that never posted its side waited for ever.
void RecoveryAdapter::watch_waits_under_way() {
  struct Watched {
    int world;
    double since, check;
  };
  auto watched = std::make_shared<std::vector<Watched>>();
  for (int world = 0; world < facts_.world_size(); ++world) {
    const RankActivity& rank = detector_.activity(world);
    if (rank.doing == RankActivity::Doing::waiting && host_up(world))
      watched->push_back({world, rank.since, now() + detector_.armed(world)});
  }
  if (watched->empty()) return;
  auto watch = [shared = state_.shared_from_this(), this, watched] {
    while (!watched->empty()) {
      // the earliest check (the lowest rank of those at the same time)
      auto next = std::min_element(watched->begin(), watched->end(),
                                   [](const Watched& a, const Watched& b) { return a.check < b.check; });
      if (next->check > now()) sg4::this_actor::sleep_until(next->check);
      const RankActivity& rank = detector_.activity(next->world);
      if (rank.doing != RankActivity::Doing::waiting || rank.since != next->since || !detector_.runs(next->world)) {
        watched->erase(next);
        continue;
      }
      next->check = now() + detector_.suspect(next->world);
    }
  };
  sg4::Actor::create("watchdog", state_.setup.control_host, watch)->daemonize();
}

// A wait whose deadline moved up after its worker armed its timer (Detector::settle, at the
// end of the instant it began in): checked from the control host at its deadline, and at
// each next check before the worker's own timer, as the watchdog above checks the waits of
// before a fault. The worker's timer then finds the wait checked (Detector::suspect only
// says when it is next due). Rare: a transfer that shared the wait's links ended at the
// instant the wait began, after it (none in the fault matrices measured).
void RecoveryAdapter::check_at(int world, double since, double time, double until) {
  auto check = [shared = state_.shared_from_this(), this, world, since, time, until] {
    for (double at = time; at < until;) {
      sg4::this_actor::sleep_until(at);
      const RankActivity& rank = detector_.activity(world);
      if (rank.doing != RankActivity::Doing::waiting || rank.since != since || !detector_.runs(world)) return;
      at = now() + detector_.suspect(world);
    }
  };
  sg4::Actor::create("deadline-check", state_.setup.control_host, check)->daemonize();
}

sg4::CommPtr RecoveryAdapter::verdict_channel(int world) {
  sg4::CommPtr& get = verdict_gets_[static_cast<size_t>(world)];
  if (!get) get = verdict_mailbox(world)->get_async<Verdict>(&verdicts_[static_cast<size_t>(world)]);
  return get;
}

// The mailbox of the rank's current incarnation, so that a verdict left unread by a killed
// worker never reaches the next.
sg4::Mailbox* RecoveryAdapter::verdict_mailbox(int world) const {
  return sg4::Mailbox::by_name(fmt::format("verdict:{}:{}", world, incarnations_[static_cast<size_t>(world)]));
}

void RecoveryAdapter::join(int world) {
  // The killed worker's receive: SimGrid cancelled it with its actor (its s4u handle still
  // says STARTED), and waiting on it would throw. Dropped, not cancelled again.
  const auto w = static_cast<size_t>(world);
  verdict_gets_[w] = nullptr;
  verdicts_[w] = nullptr;
  verdicts_sent_[w] = verdicts_taken_[w] = 0;
  last_letters_[w] = nullptr;
  lost_[w] = false;
  ++incarnations_[w];
  detector_.join(world);
}

// Verdicts cross the network when the worker reads them (SimGrid starts a transfer once
// both sides are posted): one sent before a link on its way went down, and read after, is
// lost on the way. That is no sign that the worker is cut off (the link may be the control
// host's, and back soon): the coordinator sends it again once its way is up.
Verdict RecoveryAdapter::take_verdict(int world) {
  const auto w = static_cast<size_t>(world);
  const Verdict* verdict = nullptr;
  do {
    sg4::CommPtr get = verdict_channel(world);
    try {
      if (!lost_[w]) {
        get->wait();
      } else if (sg4::Comm::wait_any_for({get}, 2 * coordinator_->link_patience()) < 0) {
        // Nothing came back: cut off from the coordinator, the worker leaves the run.
        get->cancel();
        verdict_gets_[w] = nullptr;
        lost_[w] = false;
        return Verdict{true, nullptr, 0};
      }
      verdict = verdicts_[w];
      lost_[w] = false;
    } catch (const simgrid::NetworkFailureException&) {
      lost_[w] = true;
    }
    verdicts_[w] = nullptr;
    verdict_gets_[w] = nullptr;
    // Those before the last one are overridden by it: only the last one lost is asked for again.
    if (++verdicts_taken_[w] >= verdicts_sent_[w] && lost_[w]) detector_.undelivered(world);
  } while (verdicts_taken_[w] < verdicts_sent_[w] || lost_[w]);
  detector_.verdict_read(world);
  // A new group starts on every survivor at one instant (Coordinator::start_line).
  if (!verdict->dropped && !verdict->admission && verdict->start_at > now()) sg4::this_actor::sleep_until(verdict->start_at);
  return *verdict;
}

void RecoveryAdapter::retire(int world) {
  sg4::CommPtr& get = verdict_gets_[static_cast<size_t>(world)];
  if (get && get->get_state() == sg4::Activity::State::STARTED) get->cancel();
  get = nullptr;
  verdicts_[static_cast<size_t>(world)] = nullptr;
  detector_.idle(world);
}

}  // namespace collsim
