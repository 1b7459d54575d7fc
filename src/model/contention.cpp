#include "model/contention.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "model/network.hpp"
#include "util/units.hpp"

namespace collsim {
namespace {

constexpr double unlimited = std::numeric_limits<double>::infinity();

struct StepCost {
  double time = 0;
  int bottleneck = -1;  // network link id
  int sharing = 0;
};

// One message of a step, as the fluid model sees it.
struct Transfer {
  double start = 0;       // when its bytes may flow: overheads and route latency paid
  double remaining = 0;   // bytes
  double weight = 1;      // max-min weight: 1 / the route's latency (SimGrid's sharing penalty)
  double bound = unlimited;  // the slowest link of its route (what a fatpipe allows)
  std::vector<int> links;    // local indices of its shared links
  std::vector<int> route;    // local indices of all its links
  int bound_link = -1;       // local index of the link that sets `bound`
  double rate = 0;
  int limited_by = -1;       // local index of the link that set its rate
  double finish = -1;
};

class StepSolver {
public:
  StepSolver(const Step& step, const ModelInput& in, const Network& network) {
    transfers_.reserve(step.flows.size());
    for (const Flow& flow : step.flows) {
      const NetworkRoute& route = network.route(endpoint(in, flow.src), endpoint(in, flow.dst));
      Transfer t;
      t.start = (flow.order + 1) * in.overhead + route.latency;
      t.remaining = flow.bytes;
      t.weight = route.latency > 0 ? 1 / route.latency : 1;
      for (int id : route.links) {
        const NetworkLink& link = network.link(id);
        const int local = local_link(id, link);
        t.route.push_back(local);
        if (link.shared) t.links.push_back(local);
        if (link.bandwidth < t.bound) {
          t.bound = link.bandwidth;
          t.bound_link = local;
        }
      }
      transfers_.push_back(std::move(t));
    }
  }

  StepCost run() {
    std::vector<size_t> waiting(transfers_.size());
    for (size_t i = 0; i < waiting.size(); ++i) waiting[i] = i;
    // latest start last, so that the next to start is at the back
    std::sort(waiting.begin(), waiting.end(),
              [&](size_t a, size_t b) { return transfers_[a].start > transfers_[b].start; });
    std::vector<size_t> active;
    double now = 0;
    StepCost cost;
    auto finish = [&](size_t i, double at) {
      Transfer& t = transfers_[i];
      t.finish = at;
      if (at >= cost.time) {
        cost.time = at;
        cost.bottleneck = t.limited_by >= 0 ? ids_[static_cast<size_t>(t.limited_by)] : -1;
        cost.sharing = t.limited_by >= 0 ? crossing_[static_cast<size_t>(t.limited_by)] : 0;
      }
    };
    while (!waiting.empty() || !active.empty()) {
      if (active.empty()) now = std::max(now, transfers_[waiting.back()].start);
      // messages whose latency is paid join the sharing
      while (!waiting.empty() && transfers_[waiting.back()].start <= now) {
        const size_t i = waiting.back();
        waiting.pop_back();
        if (transfers_[i].remaining <= 0 || transfers_[i].bound == unlimited) finish(i, now);
        else active.push_back(i);
      }
      if (active.empty()) continue;
      share(active);
      double next = unlimited;
      for (size_t i : active) next = std::min(next, now + transfers_[i].remaining / transfers_[i].rate);
      const double next_start = waiting.empty() ? unlimited : transfers_[waiting.back()].start;
      const double until = std::min(next, next_start);
      const double elapsed = until - now;
      std::vector<size_t> still;
      for (size_t i : active) {
        Transfer& t = transfers_[i];
        // the message that sets `next` ends exactly then; others within rounding of it too
        const double left = t.remaining - t.rate * elapsed;
        if (now + t.remaining / t.rate <= until || left <= 1e-9 * t.remaining) finish(i, now + t.remaining / t.rate);
        else {
          t.remaining = left;
          still.push_back(i);
        }
      }
      active.swap(still);
      now = until;
    }
    return cost;
  }

private:
  static int endpoint(const ModelInput& in, int rank) {
    return in.endpoints.empty() ? rank : in.endpoints[static_cast<size_t>(rank)];
  }

  int local_link(int id, const NetworkLink& link) {
    auto [it, added] = local_.emplace(id, static_cast<int>(ids_.size()));
    if (added) {
      ids_.push_back(id);
      capacity_.push_back(link.bandwidth);
    }
    return it->second;
  }

  // Weighted max-min fairness by progressive filling: the shared link whose capacity per
  // unit of weight is smallest fixes the rates of the messages crossing it, and so on;
  // a message's own bound (a fatpipe) fixes it first if it is lower.
  void share(const std::vector<size_t>& active) {
    const size_t links = ids_.size();
    std::vector<double> left(capacity_), weight(links, 0);
    crossing_.assign(links, 0);
    std::vector<char> fixed(transfers_.size(), 1);
    for (size_t i : active) {
      fixed[i] = 0;
      for (int l : transfers_[i].links) weight[static_cast<size_t>(l)] += transfers_[i].weight;
      for (int l : transfers_[i].route) ++crossing_[static_cast<size_t>(l)];
    }
    size_t unfixed = active.size();
    while (unfixed > 0) {
      double level = unlimited;
      for (size_t l = 0; l < links; ++l)
        if (weight[l] > 0) level = std::min(level, left[l] / weight[l]);
      double bound_level = unlimited;
      for (size_t i : active)
        if (!fixed[i]) bound_level = std::min(bound_level, transfers_[i].bound / transfers_[i].weight);
      auto fix = [&](size_t i, double rate, int by) {
        Transfer& t = transfers_[i];
        t.rate = rate;
        t.limited_by = by;
        fixed[i] = 1;
        --unfixed;
        for (int l : t.links) {
          left[static_cast<size_t>(l)] = std::max(0.0, left[static_cast<size_t>(l)] - rate);
          weight[static_cast<size_t>(l)] -= t.weight;
          if (weight[static_cast<size_t>(l)] < 1e-12 * t.weight) weight[static_cast<size_t>(l)] = 0;
        }
      };
      if (bound_level <= level) {
        for (size_t i : active)
          if (!fixed[i] && transfers_[i].bound / transfers_[i].weight <= bound_level * (1 + 1e-12))
            fix(i, transfers_[i].bound, transfers_[i].bound_link);
        continue;
      }
      // every link at (within rounding of) this level is saturated now
      std::vector<char> saturated(links, 0);
      for (size_t l = 0; l < links; ++l)
        if (weight[l] > 0 && left[l] / weight[l] <= level * (1 + 1e-12)) saturated[l] = 1;
      for (size_t i : active) {
        if (fixed[i]) continue;
        for (int l : transfers_[i].links)
          if (saturated[static_cast<size_t>(l)]) {
            fix(i, level * transfers_[i].weight, l);
            break;
          }
      }
    }
  }

  std::vector<Transfer> transfers_;
  std::unordered_map<int, int> local_;
  std::vector<int> ids_;
  std::vector<double> capacity_;
  std::vector<int> crossing_;
};

// Identical step patterns (the same messages, sizes and order) are priced once.
struct PatternKey {
  size_t hash;
  const std::vector<Flow>* flows;
  bool operator==(const PatternKey& other) const { return hash == other.hash && *flows == *other.flows; }
};
struct PatternHash {
  size_t operator()(const PatternKey& key) const { return key.hash; }
};

size_t hash_flows(const std::vector<Flow>& flows) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  };
  for (const Flow& f : flows) {
    mix(static_cast<uint64_t>(f.src) << 32 | static_cast<uint32_t>(f.dst));
    uint64_t bits = 0;
    static_assert(sizeof(bits) == sizeof(f.bytes));
    std::memcpy(&bits, &f.bytes, sizeof(bits));
    mix(bits);
    mix(static_cast<uint64_t>(f.order));
  }
  return static_cast<size_t>(h);
}

// How much longer a step whose receivers reduce lasts: the most bytes one rank reduces,
// at the ranks' reduction bandwidth (0 when reductions are free).
double reduction_time(const Step& step, const ModelInput& in) {
  if (!step.reduced || !std::isfinite(in.reduce_bandwidth)) return 0;
  std::unordered_map<int, double> received;
  double most = 0;
  for (const Flow& flow : step.flows) most = std::max(most, received[flow.dst] += flow.bytes);
  return most / in.reduce_bandwidth;
}

}  // namespace

ModelEstimate estimate_schedule(const Schedule& schedule, const ModelInput& in) {
  const std::shared_ptr<const Network> own = in.network ? nullptr : uniform_network(in);
  const Network& network = in.network ? *in.network : *own;
  const auto& steps = schedule.steps();
  std::unordered_map<PatternKey, StepCost, PatternHash> priced;
  std::vector<double> end(steps.size(), 0);
  ModelEstimate estimate;
  for (size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    const PatternKey key{hash_flows(step.flows), &step.flows};
    auto it = priced.find(key);
    if (it == priced.end()) it = priced.emplace(key, StepSolver(step, in, network).run()).first;
    const StepCost& cost = it->second;
    double start = 0;
    for (int a : step.after) start = std::max(start, end[static_cast<size_t>(a)]);
    end[s] = start + step.repeat * (cost.time + reduction_time(step, in));
    estimate.time = std::max(estimate.time, end[s]);
    estimate.steps += static_cast<size_t>(step.repeat);
    estimate.largest_step = std::max(estimate.largest_step, step.flows.size());
    if (estimate.slowest_step < 0 || cost.time > estimate.slowest_step_time) {
      estimate.slowest_step = static_cast<int>(s);
      estimate.slowest_step_time = cost.time;
      estimate.bottleneck = cost.bottleneck >= 0 ? network.link(cost.bottleneck).name : "";
      estimate.bottleneck_bandwidth = cost.bottleneck >= 0 ? network.link(cost.bottleneck).bandwidth : 0;
      estimate.sharing = cost.sharing;
    }
  }
  estimate.patterns = priced.size();
  estimate.estimate_note = schedule.estimate_note();
  return estimate;
}

std::string realistic_network_caveat() {
  return "the model prices the ideal network; under `realistic` SimGrid adds TCP effects (latency x13.01, "
         "bandwidth x0.97, cross-traffic, the TCP window cap) that it does not model";
}

std::string impractical_reason(const Schedule& schedule) {
  for (const Step& step : schedule.steps()) {
    if (step.flows.size() > max_messages_per_step)
      return fmt::format("{} messages at once in one step (more than {})", step.flows.size(), max_messages_per_step);
    std::unordered_map<int, double> received;
    for (const Flow& flow : step.flows) received[flow.dst] += flow.bytes;
    for (const auto& [rank, bytes] : received)
      if (bytes > max_receive_bytes)
        return fmt::format("rank {} receives {} at once (buffers beyond {})", rank, format_size(bytes),
                           format_size(max_receive_bytes));
  }
  return {};
}

}  // namespace collsim
