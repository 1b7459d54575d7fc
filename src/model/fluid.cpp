#include "model/fluid.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <queue>
#include <tuple>

#include "comm/message_cost.hpp"
#include "comm/post_cost.hpp"

namespace collsim {
namespace {

constexpr double unlimited = std::numeric_limits<double>::infinity();
constexpr size_t batched_above = 4096;  // messages in flight at once
constexpr double batch_window = 1e-3;   // relative to the time

// One message as the fluid model sees it.
struct Transfer {
  double send_posted = -1, recv_posted = -1;
  double start = 0;          // when its bytes may flow: both ends posted, overheads and latency paid
  double latency = 0;
  double hop = 0;            // the receiver's hold after the last byte (MessagePrice::hop_latency)
  double post = 0;           // the sender's time to post it (comm/post_cost.hpp)
  double remaining = 0;      // bytes on the wire
  double weight = 1;         // max-min weight: 1 / the route's latency (SimGrid's sharing penalty)
  double bound = unlimited;  // the slowest link of its route (what a fatpipe allows)
  uint32_t links_first = 0, links_end = 0;  // its shared links: FluidRun::links_ from links_first
  uint32_t route_first = 0, route_end = 0;  // all its links: FluidRun::route_links_ from route_first
  int bound_link = -1;       // local index of the link that sets `bound`
  double rate = 0;
  int limited_by = -1;       // local index of the link that set its rate
  int send_round = 0, recv_round = 0;  // the rounds in which its sender and its receiver wait for it
  int wait_round = 0;  // the receiver's round that waits for it (recv_round, or later: FluidMessage::wait_key)
  int listed_round = 0;  // the sender's round that lists it (send_round before a FIFO moves its wait)
  bool queued = false;       // both ends have posted it: it waits for its start, or moves
};

// A rank's round: the messages it posts when the round begins (with the side it posts:
// true for a send), how many it waits for, and the bytes it reduces once they are in.
struct Round {
  std::vector<std::pair<size_t, bool>> posts;
  std::vector<size_t> received;  // messages it waits for as their receiver
  size_t pending = 0;
  double reduced_bytes = 0;
  double done_at = 0;  // the latest completion of its messages so far
  bool posted = false;  // begun: its messages may all be in before then (posted early, waited late)
};

// Network link ids numbered locally (0, 1, ... in the order met, listed in `ids`) through a
// table by network id that lives as long as the thread: a run of a few messages on a
// network of a million links costs no table of its own (the lock-step pricing makes one run
// per class of every step). The entries it set are cleared when it goes.
class LocalLinks {
public:
  explicit LocalLinks(std::vector<int>& ids) : ids_(ids) {}
  ~LocalLinks() {
    for (int id : ids_) table()[static_cast<size_t>(id)] = -1;
  }
  LocalLinks(const LocalLinks&) = delete;
  LocalLinks& operator=(const LocalLinks&) = delete;
  int local(int id) {
    std::vector<int>& by_id = table();
    if (by_id.size() <= static_cast<size_t>(id)) by_id.resize(static_cast<size_t>(id) + 1, -1);
    int& local = by_id[static_cast<size_t>(id)];
    if (local < 0) {
      local = static_cast<int>(ids_.size());
      ids_.push_back(id);
    }
    return local;
  }

private:
  static std::vector<int>& table() {
    thread_local std::vector<int> by_id;
    return by_id;
  }
  std::vector<int>& ids_;
};

class FluidRun {
public:
  FluidRun(const std::vector<FluidMessage>& messages, const ModelInput& in, const Network& network,
           const std::vector<int>* endpoints, LinkFacts* facts)
      : messages_(messages), in_(in), network_(network), endpoints_(endpoints), facts_(facts), arrivals_(messages.size()) {
    transfers_.resize(messages.size());
    // ranks, then any switch a message reaches (ranks p and above: ModelInput::switch_endpoints)
    int parties = endpoints != nullptr ? static_cast<int>(endpoints->size()) : in.p;
    for (const FluidMessage& message : messages) parties = std::max({parties, message.flow.src + 1, message.flow.dst + 1});
    rounds_.resize(static_cast<size_t>(parties));
    {
      LocalLinks numbering(ids_);
      for (size_t m = 0; m < messages.size(); ++m) describe(m, messages[m].flow, numbering);
    }
    number_rounds(parties);
    for (size_t m = 0; m < messages.size(); ++m) place(m);
  }

  std::vector<Arrival> run() {
    for (size_t r = 0; r < rounds_.size(); ++r)
      if (!rounds_[r].empty()) post(static_cast<int>(r), 0, 0);
    double now = 0;
    while (!ready_.empty() || !active_.empty()) {
      if (active_.empty()) now = std::max(now, ready_.top().first);
      // messages whose latency is paid join the sharing
      while (!ready_.empty() && ready_.top().first <= now) {
        const size_t i = ready_.top().second;
        ready_.pop();
        if (transfers_[i].remaining <= 0 || transfers_[i].bound == unlimited) complete(i, now);
        else active_.push_back(i);
      }
      if (active_.empty()) continue;
      share();
      double next = unlimited;
      for (size_t i : active_) next = std::min(next, now + transfers_[i].remaining / transfers_[i].rate);
      const double until = std::min(next, ready_.empty() ? unlimited : ready_.top().first);
      const double elapsed = until - now;
      // with very many messages in flight (direct at p = 256: 65,280) nearly every one
      // ends at its own time, and each end would cost a sharing of them all: those ending
      // within batch_window of `until` end together (each at its own time, the bandwidth
      // it leaves shared a little early)
      const double batch = active_.size() > batched_above ? until * batch_window : 0;
      std::vector<size_t> still, done;
      for (size_t i : active_) {
        Transfer& t = transfers_[i];
        // the message that sets `next` ends exactly then; others within rounding of it too
        const double left = t.remaining - t.rate * elapsed;
        if (now + t.remaining / t.rate <= until + batch || left <= 1e-9 * t.remaining) done.push_back(i);
        else {
          t.remaining = left;
          still.push_back(i);
        }
      }
      active_.swap(still);
      for (size_t i : done) complete(i, now + transfers_[i].remaining / transfers_[i].rate);
      now = until;
    }
    return std::move(arrivals_);
  }

private:
  int endpoint(int rank) const {
    return endpoints_ != nullptr ? (*endpoints_)[static_cast<size_t>(rank)] : model_endpoint(in_, rank);
  }

  // Each rank's rounds, in the order of their first message (a new key starts one); each
  // message's round at its sender and at its receiver (one round when they are the same rank).
  void number_rounds(int parties) {
    std::vector<std::vector<int>> keys(static_cast<size_t>(parties));  // each party's rounds' keys
    for (size_t m = 0; m < messages_.size(); ++m) {
      const FluidMessage& message = messages_[m];
      for (int rank : {message.flow.src, message.flow.dst}) {
        auto& mine = keys[static_cast<size_t>(rank)];
        if (mine.empty() || mine.back() != message.round_key) mine.push_back(message.round_key);
        (rank == message.flow.src ? transfers_[m].send_round : transfers_[m].recv_round) = static_cast<int>(mine.size()) - 1;
        if (message.flow.src == message.flow.dst) break;
      }
      if (message.flow.src == message.flow.dst) transfers_[m].recv_round = transfers_[m].send_round;
    }
    // a message waited for later: in its receiver's last round keyed at most its wait key
    for (size_t m = 0; m < messages_.size(); ++m) {
      const auto& mine = keys[static_cast<size_t>(messages_[m].flow.dst)];
      transfers_[m].wait_round = transfers_[m].recv_round;
      if (messages_[m].wait_key > messages_[m].round_key)
        transfers_[m].wait_round = static_cast<int>(std::upper_bound(mine.begin(), mine.end(), messages_[m].wait_key) - mine.begin()) - 1;
    }
    for (size_t r = 0; r < rounds_.size(); ++r) rounds_[r].resize(keys[r].size());
  }

  // Where a message is posted and waited for. In its round, unless it is pipelined through
  // a FIFO of `fifo` slots: its receiver posts it `fifo` rounds early (at once if that is
  // before its first), its sender waits for it `fifo` rounds late (or in its last round); one
  // marked at_end, in its last round.
  void place(size_t m) {
    const FluidMessage& message = messages_[m];
    Transfer& t = transfers_[m];
    const int src = message.flow.src, dst = message.flow.dst;
    auto& sender = rounds_[static_cast<size_t>(src)];
    auto& receiver = rounds_[static_cast<size_t>(dst)];
    const int fifo = message.fifo;
    const int send_post = message.flow.ahead ? std::max(0, t.send_round - fifo) : t.send_round;
    const int recv_post = std::max(0, t.recv_round - fifo);
    t.listed_round = t.send_round;
    if (message.at_end) t.send_round = static_cast<int>(sender.size()) - 1;
    else if (fifo > 0) t.send_round = std::min(t.send_round + fifo, static_cast<int>(sender.size()) - 1);
    sender[static_cast<size_t>(send_post)].posts.emplace_back(m, true);
    if (src == dst) {
      ++sender[static_cast<size_t>(t.send_round)].pending;
      return;
    }
    receiver[static_cast<size_t>(recv_post)].posts.emplace_back(m, false);
    ++sender[static_cast<size_t>(t.send_round)].pending;
    Round& waits = receiver[static_cast<size_t>(t.wait_round)];
    ++waits.pending;
    waits.received.push_back(m);
    if (message.reduced) waits.reduced_bytes += message.flow.bytes;
  }

  void describe(size_t m, const Flow& flow, LocalLinks& numbering) {
    const int from = endpoint(flow.src), to = endpoint(flow.dst);
    route_.clear();
    const double latency = network_.append_route(from, to, route_);  // read once, not kept
    Transfer& t = transfers_[m];
    t.latency = latency;
    t.remaining = flow.bytes;
    t.weight = latency > 0 ? 1 / latency : 1;
    if (in_.message_cost) {
      const MessagePrice& price = in_.message_cost->price_for(from, to, flow.bytes);
      t.remaining = price.wire_bytes(flow.bytes);
      t.hop = price.hop_latency;
      t.post = post_overhead_of(in_.message_cost.get(), from, to, flow.bytes);
      posts_cost_ = posts_cost_ || t.post > 0;
      t.bound = price.rate_cap;
    }
    t.links_first = t.links_end = static_cast<uint32_t>(links_.size());
    t.route_first = t.route_end = static_cast<uint32_t>(route_links_.size());
    for (int id : route_) {
      const auto [bandwidth, shared] = link_facts(id);
      const int local = numbering.local(id);
      if (static_cast<size_t>(local) == capacity_.size()) capacity_.push_back(bandwidth);
      route_links_.push_back(local);
      ++t.route_end;
      if (shared) {
        links_.push_back(local);
        ++t.links_end;
      }
      if (bandwidth < t.bound) {
        t.bound = bandwidth;
        t.bound_link = local;
      }
    }
  }

  std::pair<double, bool> link_facts(int id) const {
    if (facts_ == nullptr) {
      const NetworkLink& link = network_.link(id);
      return {link.bandwidth, link.shared};
    }
    const auto [bits, shared] = facts_->of(network_, id);
    double bandwidth = 0;
    std::memcpy(&bandwidth, &bits, sizeof(bandwidth));
    return {bandwidth, shared};
  }

  // A transfer's shared links and all its links, as local indices.
  struct Ints {
    const int *first, *last;
    const int* begin() const { return first; }
    const int* end() const { return last; }
  };
  Ints links_of(const Transfer& t) const { return {links_.data() + t.links_first, links_.data() + t.links_end}; }
  Ints route_of(const Transfer& t) const { return {route_links_.data() + t.route_first, route_links_.data() + t.route_end}; }

  // Rank r posts its round-th round at `at`: its sends leave after their overheads; a
  // message whose both ends are posted starts after its route's latency. A round of sends
  // the rank does not wait for is over at once.
  void post(int rank, int round, double at) {
    Round& posted = rounds_[static_cast<size_t>(rank)][static_cast<size_t>(round)];
    posted.posted = true;
    posted.done_at = std::max(posted.done_at, at);
    if (posts_cost_) add_post_overheads(posted);
    for (const auto& [m, send] : posted.posts) {
      Transfer& t = transfers_[m];
      const Flow& flow = messages_[m].flow;
      if (send) {
        t.send_posted = at + (flow.order + 1) * in_.overhead + (posts_cost_ ? post_before_[m] : 0);
        // the rank posts its sends one after another and goes on only then (Comm::post_send
        // holds its actor): a round it does not wait on still ends no earlier
        posted.done_at = std::max(posted.done_at, t.send_posted);
      }
      if (!send || flow.src == flow.dst) t.recv_posted = at + (posts_cost_ && !send ? recv_after_[m] : 0);
      if (t.send_posted < 0 || t.recv_posted < 0 || t.queued) continue;
      t.queued = true;
      arrivals_[m].posted = std::max(t.send_posted, t.recv_posted);
      t.start = arrivals_[m].posted + t.latency;
      ready_.emplace(t.start, m);
    }
    if (posted.pending == 0) next_round(rank, round);
  }

  // The transport's post overheads of a round's sends, which the rank posts one after another
  // (Comm::post_send holds its actor): each send leaves after its own and those before it,
  // and a receive is posted once the sends before it are. The order is the run's
  // (run_pipelined): unpipelined, the round's sends in their order; through a FIFO, first
  // (in the first round) the early posts of the rounds before the FIFO's depth, then the
  // round's own sends, then the early posts of the round a FIFO ahead (its receives, then
  // its sends of data that waits for nothing), each part by round, then in send order.
  using PostKey = std::tuple<int, int, int>;
  PostKey post_key(size_t m, bool send) const {
    const FluidMessage& message = messages_[m];
    const Transfer& t = transfers_[m];
    if (message.fifo == 0) return {send ? 1 : -1, 0, message.flow.order};
    const int own = send ? t.listed_round : t.recv_round;
    if (send && !message.flow.ahead) return {1, own, message.flow.order};
    const int part = own < message.fifo ? 0 : 2;
    return {part, own, send ? message.flow.order : -1};
  }
  void add_post_overheads(const Round& round) {
    if (post_before_.empty()) {
      post_before_.assign(transfers_.size(), 0);
      recv_after_.assign(transfers_.size(), 0);
    }
    std::vector<std::pair<PostKey, size_t>> sends;
    for (const auto& [m, send] : round.posts)
      if (send) sends.emplace_back(post_key(m, true), m);
    std::stable_sort(sends.begin(), sends.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    double sum = 0;
    for (const auto& [key, m] : sends) post_before_[m] = sum += transfers_[m].post;
    for (const auto& [m, send] : round.posts) {
      if (send) continue;
      const PostKey key = post_key(m, false);
      double before = 0;
      for (const auto& [other, o] : sends)
        if (other < key) before += transfers_[o].post;
      recv_after_[m] = before;
    }
  }

  void complete(size_t m, double at) {
    Transfer& t = transfers_[m];
    Arrival& arrival = arrivals_[m];
    // the receiver holds it a hop latency after its last byte (the sender is done then)
    arrival.finish = at + t.hop;
    arrival.reduced = arrival.finish;
    arrival.bottleneck = t.limited_by >= 0 ? ids_[static_cast<size_t>(t.limited_by)] : -1;
    arrival.sharing = t.limited_by >= 0 ? crossing_[static_cast<size_t>(t.limited_by)] : 0;
    const Flow& flow = messages_[m].flow;
    finish_part(flow.src, t.send_round, at);
    if (flow.dst != flow.src) finish_part(flow.dst, t.wait_round, arrival.finish);
  }

  // A rank's round is done when its last message is (the latest of their completions).
  void finish_part(int rank, int round, double at) {
    Round& done = rounds_[static_cast<size_t>(rank)][static_cast<size_t>(round)];
    done.done_at = std::max(done.done_at, at);
    if (--done.pending == 0 && done.posted) next_round(rank, round);
  }

  // When a rank's round is done it reduces what it received (busy until `free_at`), then
  // posts its next round.
  void next_round(int rank, int round) {
    auto& rounds = rounds_[static_cast<size_t>(rank)];
    Round& done = rounds[static_cast<size_t>(round)];
    const double at = done.done_at;
    const double free_at = done.reduced_bytes > 0 ? at + done.reduced_bytes / in_.reduce_bandwidth : at;
    for (size_t m : done.received)
      if (messages_[m].reduced) arrivals_[m].reduced = free_at;
    if (round + 1 < static_cast<int>(rounds.size())) post(rank, round + 1, free_at);
  }

  // Links by level, with the version of the link's values the entry was made from
  // (stale entries are skipped).
  using Level = std::pair<double, std::pair<int, unsigned>>;
  using Levels = std::priority_queue<Level, std::vector<Level>, std::greater<>>;

  // Weighted max-min fairness by progressive filling: the shared link whose capacity per
  // unit of weight is smallest fixes the rates of the messages crossing it, and so on;
  // a message's own bound (a fatpipe) fixes it first if it is lower. The links wait in a
  // heap by their level (left / weight), the messages in order of their bound, so that a
  // share costs O(messages x route x log links), not O(links + messages) per level.
  void share() {
    load_links();
    Levels heap;
    for (int l : touched_) push_level(heap, l);
    by_bound_ = active_;
    std::stable_sort(by_bound_.begin(), by_bound_.end(), [&](size_t a, size_t b) {
      return transfers_[a].bound / transfers_[a].weight < transfers_[b].bound / transfers_[b].weight;
    });
    fill_levels(heap);
  }

  // Each link's capacity left, weight and messages crossing it, for the messages in
  // flight; the links they touch, and each touched link's messages in the order of active_.
  void load_links() {
    const size_t links = ids_.size();
    left_.resize(links);
    weight_.assign(links, 0);
    crossing_.assign(links, 0);
    version_.resize(links);
    saturated_.assign(links, 0);
    touched_.clear();
    for (size_t i : active_) {
      Transfer& t = transfers_[i];
      t.rate = -1;
      for (int l : links_of(t)) {
        if (weight_[static_cast<size_t>(l)] == 0) {
          touched_.push_back(l);
          left_[static_cast<size_t>(l)] = capacity_[static_cast<size_t>(l)];
        }
        weight_[static_cast<size_t>(l)] += t.weight;
      }
      for (int l : route_of(t)) ++crossing_[static_cast<size_t>(l)];
    }
    first_.assign(touched_.size() + 1, 0);
    slot_.assign(links, -1);
    for (size_t k = 0; k < touched_.size(); ++k) slot_[static_cast<size_t>(touched_[k])] = static_cast<int>(k);
    for (size_t i : active_)
      for (int l : links_of(transfers_[i])) ++first_[static_cast<size_t>(slot_[static_cast<size_t>(l)]) + 1];
    for (size_t k = 0; k < touched_.size(); ++k) first_[k + 1] += first_[k];
    crossers_.resize(first_.back());
    std::vector<size_t> fill(first_.begin(), first_.end() - 1);
    for (size_t i : active_)
      for (int l : links_of(transfers_[i])) crossers_[fill[static_cast<size_t>(slot_[static_cast<size_t>(l)])]++] = i;
  }

  // The filling itself: level by level, the lowest of a link's and a message's own bound.
  void fill_levels(Levels& heap) {
    size_t next_bound = 0;
    unfixed_ = active_.size();
    while (unfixed_ > 0) {
      const double level = lowest_level(heap);
      while (next_bound < by_bound_.size() && transfers_[by_bound_[next_bound]].rate >= 0) ++next_bound;
      const double bound_level = next_bound < by_bound_.size()
                                     ? transfers_[by_bound_[next_bound]].bound / transfers_[by_bound_[next_bound]].weight
                                     : unlimited;
      if (bound_level <= level) {
        for (size_t k = next_bound; k < by_bound_.size(); ++k) {
          Transfer& t = transfers_[by_bound_[k]];
          if (t.bound / t.weight > bound_level * (1 + 1e-12)) break;
          if (t.rate < 0) fix(t, t.bound, t.bound_link, heap);
        }
        continue;
      }
      // every link at (within rounding of) this level is saturated now; each of their
      // messages takes the level, limited by the first saturated link of its route
      std::vector<int> now_saturated;
      while (!heap.empty() && heap.top().first <= level * (1 + 1e-12)) {
        const int l = heap.top().second.first;
        const bool current = heap.top().second.second == version_[static_cast<size_t>(l)];
        heap.pop();
        if (!current || saturated_[static_cast<size_t>(l)] || weight_[static_cast<size_t>(l)] <= 0) continue;
        saturated_[static_cast<size_t>(l)] = 1;
        now_saturated.push_back(l);
      }
      for (int l : now_saturated) {
        const auto k = static_cast<size_t>(slot_[static_cast<size_t>(l)]);
        for (size_t c = first_[k]; c < first_[k + 1]; ++c) {
          Transfer& t = transfers_[crossers_[c]];
          if (t.rate >= 0) continue;
          int by = l;
          for (int m : links_of(t))
            if (saturated_[static_cast<size_t>(m)]) {
              by = m;
              break;
            }
          fix(t, level * t.weight, by, heap);
        }
      }
    }
  }

  // `t` takes `rate`, limited by link `by` (local index; -1: its own bound): the links it
  // crosses have that much less left and its weight less, at a new level.
  void fix(Transfer& t, double rate, int by, Levels& levels) {
    t.rate = rate;
    t.limited_by = by;
    --unfixed_;
    for (int l : links_of(t)) {
      const auto link = static_cast<size_t>(l);
      left_[link] = std::max(0.0, left_[link] - rate);
      weight_[link] -= t.weight;
      if (weight_[link] < 1e-12 * t.weight) weight_[link] = 0;
      if (!saturated_[link]) push_level(levels, l);
    }
  }


  void push_level(Levels& levels, int l) {
    const auto link = static_cast<size_t>(l);
    ++version_[link];
    if (weight_[link] > 0) levels.push({left_[link] / weight_[link], {l, version_[link]}});
  }

  // The lowest level of a link still carrying unfixed messages (stale entries dropped).
  double lowest_level(Levels& levels) {
    while (!levels.empty()) {
      const int l = levels.top().second.first;
      if (levels.top().second.second == version_[static_cast<size_t>(l)] && !saturated_[static_cast<size_t>(l)] &&
          weight_[static_cast<size_t>(l)] > 0)
        return levels.top().first;
      levels.pop();
    }
    return unlimited;
  }

  const std::vector<FluidMessage>& messages_;
  const ModelInput& in_;
  const Network& network_;
  const std::vector<int>* endpoints_;  // each rank's endpoint (null: ModelInput's)
  LinkFacts* facts_;                   // links' bandwidths and sharing as read before (null: none)
  std::vector<Arrival> arrivals_;
  std::vector<Transfer> transfers_;
  bool posts_cost_ = false;         // some message has a post overhead (Transfer::post)
  std::vector<double> post_before_;  // by message: its sender's post overheads up to and with its own
  std::vector<double> recv_after_;   // by message: its receiver's post overheads before it posts it
  std::vector<std::vector<Round>> rounds_;
  using Start = std::pair<double, size_t>;
  std::priority_queue<Start, std::vector<Start>, std::greater<>> ready_;
  std::vector<size_t> active_;
  std::vector<int> ids_;  // by local index: the network link
  std::vector<int> links_, route_links_;  // the transfers' shared links and routes, one after another
  std::vector<int> route_;  // the route describe() reads (network link ids)
  std::vector<double> capacity_, left_, weight_;
  std::vector<int> crossing_, touched_, slot_;
  std::vector<unsigned> version_;
  std::vector<size_t> first_, crossers_, by_bound_;
  size_t unfixed_ = 0;  // messages in flight whose rate the filling has not fixed yet
  std::vector<char> saturated_;
};

}  // namespace

void LinkFacts::read(const Network& network, int id) {
  const auto at = static_cast<size_t>(id);
  if (at >= bandwidth_bits_.size()) {
    bandwidth_bits_.resize(std::max(at + 1, network.link_count()), 0);
    shared_.resize(bandwidth_bits_.size());
  }
  const NetworkLink& link = network.link(id);
  std::memcpy(&bandwidth_bits_[at], &link.bandwidth, sizeof(double));
  shared_[at] = link.shared;
}

std::vector<Arrival> run_fluid(const std::vector<FluidMessage>& messages, const ModelInput& in, const Network& network) {
  return FluidRun(messages, in, network, nullptr, nullptr).run();
}

std::vector<Arrival> run_fluid(const std::vector<FluidMessage>& messages, const ModelInput& in, const Network& network,
                               const std::vector<int>& endpoints, LinkFacts* facts) {
  return FluidRun(messages, in, network, &endpoints, facts).run();
}

}  // namespace collsim
