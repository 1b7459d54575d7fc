#include "model/contention.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "algorithms/pipelined_rounds.hpp"
#include "comm/message_cost.hpp"
#include "model/fluid.hpp"
#include "model/network.hpp"
#include "model/step_classes.hpp"
#include "util/units.hpp"

namespace collsim {
namespace {

// The slowest message of these arrivals sets the cost (the last of equal ones).
StepCost slowest_of(const std::vector<Arrival>& arrivals, const std::vector<size_t>& which, double since) {
  StepCost cost;
  for (size_t m : which) {
    const Arrival& a = arrivals[m];
    if (a.finish - since < cost.time) continue;
    cost.time = a.finish - since;
    cost.bottleneck = a.bottleneck;
    cost.sharing = a.sharing;
  }
  return cost;
}

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

namespace {

void note_slowest(ModelEstimate& estimate, int step, const StepCost& cost, const Network& network) {
  if (estimate.slowest_step >= 0 && cost.time <= estimate.slowest_step_time) return;
  estimate.slowest_step = step;
  estimate.slowest_step_time = cost.time;
  estimate.bottleneck = cost.bottleneck >= 0 ? network.link(cost.bottleneck).name : "";
  estimate.bottleneck_bandwidth = cost.bottleneck >= 0 ? network.link(cost.bottleneck).bandwidth : 0;
  estimate.sharing = cost.sharing;
}

size_t messages_of(const Schedule& schedule) {
  size_t messages = 0;
  for (const Step& step : schedule.steps()) messages += step.flows.size() * static_cast<size_t>(step.repeat);
  return messages;
}

// Steps in lock step: each step pattern priced alone (once, and within it once per class
// of its messages: model/step_classes.hpp), steps added up along their dependencies.
ModelEstimate estimate_in_lock_step(const Schedule& schedule, const ModelInput& in, const Network& network) {
  const auto& steps = schedule.steps();
  std::unordered_map<PatternKey, StepCost, PatternHash> priced;
  LinkFacts facts;
  std::vector<double> end(steps.size(), 0);
  ModelEstimate estimate;
  for (size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    const PatternKey key{hash_flows(step.flows), &step.flows};
    auto it = priced.find(key);
    if (it == priced.end()) it = priced.emplace(key, price_step_by_class(step, in, network, &facts)).first;
    const StepCost& cost = it->second;
    double start = 0;
    for (int a : step.after) start = std::max(start, end[static_cast<size_t>(a)]);
    end[s] = start + step.repeat * (cost.time + reduction_time(step, in) + step.busy);
    estimate.time = std::max(estimate.time, end[s]);
    estimate.steps += static_cast<size_t>(step.repeat);
    estimate.largest_step = std::max(estimate.largest_step, step.flows.size());
    note_slowest(estimate, static_cast<int>(s), cost, network);
  }
  estimate.patterns = priced.size();
  return estimate;
}

// Rank by rank: the whole schedule is one fluid run in which each rank goes through its
// steps in order, each as soon as its own messages of the one before are done and (in a
// reducing step) what it received is reduced. A step's time is from its first message
// posted to its last arrived.
ModelEstimate estimate_rank_by_rank(const Schedule& schedule, const ModelInput& in, const Network& network) {
  const auto& steps = schedule.steps();
  std::vector<FluidMessage> messages;
  messages.reserve(messages_of(schedule));
  std::vector<std::vector<size_t>> of_step(steps.size());
  int instance = 0;
  ModelEstimate estimate;
  for (size_t s = 0; s < steps.size(); ++s) {
    for (int r = 0; r < steps[s].repeat; ++r, ++instance)
      for (const Flow& flow : steps[s].flows) {
        of_step[s].push_back(messages.size());
        const bool at_end = flow.wait_steps >= at_end_wait_steps;  // both ends wait for it last
        messages.push_back({flow, instance, steps[s].reduced, steps[s].fifo, instance + flow.wait_steps, at_end});
      }
    estimate.steps += static_cast<size_t>(steps[s].repeat);
    estimate.largest_step = std::max(estimate.largest_step, steps[s].flows.size());
  }
  const std::vector<Arrival> arrivals = run_fluid(messages, in, network);
  for (size_t s = 0; s < steps.size(); ++s) {
    double first_posted = std::numeric_limits<double>::infinity();
    for (size_t m : of_step[s]) {
      first_posted = std::min(first_posted, arrivals[m].posted);
      estimate.time = std::max({estimate.time, arrivals[m].finish, arrivals[m].reduced});
    }
    if (!of_step[s].empty()) note_slowest(estimate, static_cast<int>(s), slowest_of(arrivals, of_step[s], first_posted), network);
  }
  estimate.patterns = steps.size();
  return estimate;
}

}  // namespace

ModelEstimate estimate_schedule(const Schedule& schedule, const ModelInput& in) {
  const std::shared_ptr<const Network> own = in.network ? nullptr : uniform_network(in);
  const Network& network = in.network ? *in.network : *own;
  const bool followed = schedule.rank_by_rank() && messages_of(schedule) <= max_followed_messages;
  ModelEstimate estimate =
      followed ? estimate_rank_by_rank(schedule, in, network) : estimate_in_lock_step(schedule, in, network);
  // every rank starts the collective after the transport's per-collective overhead
  if (in.message_cost) estimate.time += in.message_cost->collective_overhead();
  estimate.estimate_note = schedule.estimate_note();
  estimate.rank_by_rank = followed;
  if (schedule.rank_by_rank() && !followed && estimate.estimate_note.empty())
    estimate.estimate_note = fmt::format("{} messages are too many to follow rank by rank (more than {}): its steps "
                                         "are priced in lock step, where the ranks of a pipeline drift apart",
                                         messages_of(schedule), max_followed_messages);
  return estimate;
}

std::optional<Schedule> schedule_within_model_limits(const AlgorithmInfo& algorithm, const ModelInput& in,
                                                     std::string& why) {
  try {
    const FlowBudget budget(max_model_messages);
    return algorithm.schedule(in);
  } catch (const ScheduleTooLarge& too_large) {
    why = fmt::format("its schedule describes more than {} messages (the model's limit, README \"Limits\")",
                      too_large.most);
    return std::nullopt;
  }
}

std::string model_limit_reason(const Schedule& schedule) {
  for (const Step& step : schedule.steps())
    if (step.flows.size() > max_model_step_messages)
      return fmt::format("{} messages at once in one step (the model prices at most {})", step.flows.size(),
                         max_model_step_messages);
  return {};
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
