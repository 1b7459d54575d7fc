#include "sim/detector.hpp"

#include <algorithm>
#include <limits>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <fmt/format.h>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <xbt/config.hpp>

#include "platform/platform.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

sg4::Mailbox* verdict_mailbox(int world) { return sg4::Mailbox::by_name(fmt::format("verdict:{}", world)); }

Detector::Detector(RunState& state)
    : state_(state), ranks_(static_cast<size_t>(state.world_size())),
      last_out_(static_cast<size_t>(state.world_size())), last_in_(static_cast<size_t>(state.world_size())),
      pending_(sg4::Semaphore::create(0)),
      verdict_gets_(static_cast<size_t>(state.world_size())), verdicts_(static_cast<size_t>(state.world_size()), nullptr) {
  // The network model's own corrections (realistic: TCP's latency and bandwidth factors,
  // the window that caps a route's rate), so that expected times are those SimGrid gives.
  latency_factor_ = simgrid::config::get_value<double>("network/latency-factor");
  bandwidth_factor_ = simgrid::config::get_value<double>("network/bandwidth-factor");
  tcp_gamma_ = simgrid::config::get_value<double>("network/TCP-gamma");
  // A floor so that tiny messages do not time out on noise: a few of the routes' latencies.
  min_timeout_ = state.scenario->recovery.min_timeout.value_or(5 * state.model.alpha * latency_factor_);
  // Expected times come from the platform as built, before any fault: a fault must not
  // become the norm that its own transfers are measured against.
  for (const sg4::Link* link : sg4::Engine::get_instance()->get_all_links())
    nominal_[link] = {link->get_latency(), link->get_bandwidth()};
}

Detector::~Detector() = default;

// The ends' own links are shared by the transfers each end has posted (counted on both
// sides); the links in between by the sends posted across them.
void Detector::posted(int world, int peer, bool receive) {
  RankActivity& rank = activity(world);
  ++(receive ? rank.in_flight_in : rank.in_flight_out);
  if (!receive)
    for (int link : route(world, peer).core) ++core_flows_[static_cast<size_t>(link)];
}

void Detector::finished(int world, int peer, bool receive) {
  RankActivity& rank = activity(world);
  int& count = receive ? rank.in_flight_in : rank.in_flight_out;
  count = std::max(0, count - 1);
  if (!receive)
    for (int link : route(world, peer).core) --core_flows_[static_cast<size_t>(link)];
}

const Detector::Route& Detector::route(int src, int dst) {
  LastRoute& out = last_out_[static_cast<size_t>(src)];
  if (out.peer == dst) return *out.route;
  LastRoute& in = last_in_[static_cast<size_t>(dst)];
  if (in.peer == src) return *in.route;
  auto [it, inserted] = routes_.try_emplace((static_cast<uint64_t>(src) << 32) | static_cast<uint32_t>(dst));
  if (inserted) {
    sg4::Host* from = state_.rank_hosts[static_cast<size_t>(src)];
    sg4::Host* to = state_.rank_hosts[static_cast<size_t>(dst)];
    std::vector<sg4::Link*> links;
    double live_latency = 0;
    from->route_to(to, links, &live_latency);
    it->second.bandwidth = std::numeric_limits<double>::infinity();
    for (const sg4::Link* link : links) {
      const Nominal& nominal = nominal_.at(link);
      it->second.latency += nominal.latency;
      it->second.bandwidth = std::min(it->second.bandwidth, nominal.bandwidth);
    }
    for (size_t i = 1; i + 1 < links.size(); ++i) {
      auto [index, added] = core_index_.try_emplace(links[i], static_cast<int>(core_bandwidth_.size()));
      if (added) {
        core_bandwidth_.push_back(nominal_.at(links[i]).bandwidth);
        core_flows_.push_back(0);
      }
      it->second.core.push_back(index->second);
    }
  }
  out = {dst, &it->second};
  in = {src, &it->second};
  return it->second;
}

double Detector::expected_transfer(int src, int dst, double bytes, int sharing) {
  const Route& path = route(src, dst);
  const double latency = path.latency * latency_factor_;
  double bandwidth = path.bandwidth * bandwidth_factor_ / std::max(1, sharing);
  for (int link : path.core)
    bandwidth = std::min(bandwidth, core_bandwidth_[static_cast<size_t>(link)] * bandwidth_factor_ /
                                        std::max(1, core_flows_[static_cast<size_t>(link)]));
  if (tcp_gamma_ > 0 && latency > 0) bandwidth = std::min(bandwidth, tcp_gamma_ / (2 * latency));
  const double tolerance = std::max(activity(src).tolerance, activity(dst).tolerance);
  return tolerance * (state_.model.overhead + latency + bytes / bandwidth);
}

double Detector::limit(double expected) const {
  const RecoverySpec& recovery = state_.scenario->recovery;
  const double limit = recovery.timeout_is_factor ? recovery.timeout_factor * expected : recovery.timeout;
  return std::max(limit, min_timeout_);
}

double Detector::begin_wait(int world, int peer, double bytes, bool receive, sg4::Comm* transfer) {
  RankActivity& rank = activity(world);
  if (rank.verdict) throw VerdictPending();
  const RankActivity& other = activity(peer);
  const int sharing = receive ? std::max(rank.in_flight_in, other.in_flight_out) : std::max(rank.in_flight_out, other.in_flight_in);
  rank.doing = RankActivity::Doing::waiting;
  rank.since = sg4::Engine::get_clock();
  rank.peer = peer;
  rank.receive = receive;
  rank.bytes = bytes;
  rank.activity = transfer;
  rank.checks = 0;
  rank.expected = receive ? expected_transfer(peer, world, bytes, sharing) : expected_transfer(world, peer, bytes, sharing);
  return limit(rank.expected);
}

double Detector::expected_now(int world) {
  RankActivity& rank = activity(world);
  if (rank.doing != RankActivity::Doing::waiting) return rank.expected;
  // Transfers posted since the wait began share the same links: the expectation only grows.
  const RankActivity& other = activity(rank.peer);
  const int sharing = rank.receive ? std::max(rank.in_flight_in, other.in_flight_out)
                                   : std::max(rank.in_flight_out, other.in_flight_in);
  const double now = rank.receive ? expected_transfer(rank.peer, world, rank.bytes, sharing)
                                  : expected_transfer(world, rank.peer, rank.bytes, sharing);
  rank.expected = std::max(rank.expected, now);
  return rank.expected;
}

double Detector::transfer_start(int world) const {
  const RankActivity& rank = activity(world);
  if (rank.doing != RankActivity::Doing::waiting || rank.activity == nullptr) return -1;
  return rank.activity->get_start_time();
}

double Detector::suspect(int world) {
  RankActivity& rank = activity(world);
  const double now = sg4::Engine::get_clock();
  const double deadline = limit(expected_now(world));
  const double started = transfer_start(world);
  // A transfer that started late has its whole deadline from its start.
  if (started >= 0 && now < started + deadline) return started + deadline - now;
  wake(Report{Report::Kind::suspicion, world, rank.peer, rank.since});
  // A peer still computing is checked again when its computation passes its deadline.
  const RankActivity& peer = activity(rank.peer);
  if (started < 0 && peer.doing == RankActivity::Doing::computing) {
    const double peer_deadline = peer.since + limit(peer.expected_compute);
    if (peer_deadline > now) return peer_deadline - now;
  }
  // Otherwise later and later: a long wait on a peer busy elsewhere (a tree's leaf waiting
  // for the broadcast) reports a handful of times, not once per deadline.
  return deadline * static_cast<double>(1 << std::min(++rank.checks, 20));
}

sg4::Comm* Detector::listen(int world) { return verdict_channel(world).get(); }

sg4::CommPtr Detector::verdict_channel(int world) {
  sg4::CommPtr& get = verdict_gets_[static_cast<size_t>(world)];
  if (!get) get = verdict_mailbox(world)->get_async<Verdict>(&verdicts_[static_cast<size_t>(world)]);
  return get;
}

Verdict Detector::take_verdict(int world) {
  sg4::CommPtr get = verdict_channel(world);
  get->wait();
  std::unique_ptr<Verdict> verdict(verdicts_[static_cast<size_t>(world)]);
  verdicts_[static_cast<size_t>(world)] = nullptr;
  verdict_gets_[static_cast<size_t>(world)] = nullptr;
  RankActivity& rank = activity(world);
  rank.verdict = rank.dropped = false;
  return *verdict;
}

void Detector::retire(int world) {
  sg4::CommPtr& get = verdict_gets_[static_cast<size_t>(world)];
  if (get && get->get_state() == sg4::Activity::State::STARTED) get->cancel();
  get = nullptr;
  delete verdicts_[static_cast<size_t>(world)];
  verdicts_[static_cast<size_t>(world)] = nullptr;
  activity(world).doing = RankActivity::Doing::idle;
}

void Detector::end_wait(int world) {
  RankActivity& rank = activity(world);
  const double started = transfer_start(world);
  const double now = sg4::Engine::get_clock();
  if (started >= 0 && now - started <= limit(rank.expected)) {
    rank.on_time_peer = rank.peer;
    rank.on_time_at = now;
  }
  rank.doing = RankActivity::Doing::idle;
  rank.activity = nullptr;
}

double Detector::slowdown(int world) const {
  const RankActivity& rank = activity(world);
  const double started = transfer_start(world);
  if (started < 0 || rank.expected <= 0) return 1;
  const double elapsed = sg4::Engine::get_clock() - started;
  const double done = rank.bytes - rank.activity->get_remaining();
  // The rate so far predicts the whole transfer; with nothing through yet, only a bound.
  const double predicted = done > 0 ? elapsed * rank.bytes / done : elapsed;
  return std::max(1.0, predicted / rank.expected);
}

void Detector::computing(int world, int round, double expected_seconds) {
  RankActivity& rank = activity(world);
  rank.doing = RankActivity::Doing::computing;
  rank.since = sg4::Engine::get_clock();
  rank.round = round;
  rank.expected_compute = expected_seconds * rank.tolerance;
  rank.peer = -1;
}

void Detector::idle(int world) {
  activity(world).doing = RankActivity::Doing::idle;
}

void Detector::failed(int world, int peer) {
  RankActivity& rank = activity(world);
  rank.doing = RankActivity::Doing::failed;
  rank.since = sg4::Engine::get_clock();
  rank.peer = peer;
  rank.activity = nullptr;
  wake(Report{Report::Kind::failure, world, peer, rank.since});
}

void Detector::join(int world) { wake(Report{Report::Kind::join, world, -1, sg4::Engine::get_clock()}); }

void Detector::wake(Report report) {
  reports_.push_back(report);
  pending_->release();
}

bool Detector::next_report(double timeout, Report& report) {
  if (timeout < 0) pending_->acquire();
  else if (pending_->acquire_timeout(timeout)) return false;
  report = reports_.front();
  reports_.pop_front();
  return true;
}

}  // namespace collsim
