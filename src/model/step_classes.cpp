#include "model/step_classes.hpp"

#include <cstdint>
#include <cstring>
#include <numeric>
#include <unordered_map>

#include "comm/message_cost.hpp"
#include "comm/post_cost.hpp"
#include "model/fluid.hpp"

namespace collsim {
namespace {

// The slowest of these arrivals (the last of equal ones).
StepCost slowest_arrival(const std::vector<Arrival>& arrivals) {
  StepCost cost;
  for (const Arrival& a : arrivals) {
    if (a.finish < cost.time) continue;
    cost.time = a.finish;
    cost.bottleneck = a.bottleneck;
    cost.sharing = a.sharing;
  }
  return cost;
}

// The step's messages in groups joined by the links they share: group g holds
// members[first[g]] to members[first[g + 1] - 1], in the step's order; groups are numbered
// in the order of their first message.
struct Groups {
  std::vector<int> of;          // by message: its group
  std::vector<size_t> position; // by message: its place in its group
  std::vector<size_t> first, members;
  size_t size() const { return first.size() - 1; }
};

int root_of(std::vector<int>& parent, int x) {
  while (parent[static_cast<size_t>(x)] != x) {
    parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
    x = parent[static_cast<size_t>(x)];
  }
  return x;
}

// A step's routes, read once each (Network::append_route) and kept side by side: message m's
// links are links[first[m]] to links[first[m + 1] - 1].
struct StepRoutes {
  std::vector<int> links;
  std::vector<size_t> first{0};
  std::vector<double> latency;
  size_t size() const { return latency.size(); }
  size_t length(size_t m) const { return first[m + 1] - first[m]; }
  const int* begin(size_t m) const { return links.data() + first[m]; }
  const int* end(size_t m) const { return links.data() + first[m + 1]; }
};

Groups group_messages(const StepRoutes& routes, size_t links) {
  const size_t n = routes.size();
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<int> user(links, -1);  // a message crossing the link
  for (size_t m = 0; m < n; ++m)
    for (const int* l = routes.begin(m); l != routes.end(m); ++l) {
      const int link = *l;
      int& u = user[static_cast<size_t>(link)];
      if (u < 0) u = static_cast<int>(m);
      else parent[static_cast<size_t>(root_of(parent, static_cast<int>(m)))] = root_of(parent, u);
    }
  Groups groups;
  groups.of.resize(n);
  groups.position.resize(n);
  std::vector<int> number(n, -1);
  std::vector<size_t> count;
  for (size_t m = 0; m < n; ++m) {
    int& g = number[static_cast<size_t>(root_of(parent, static_cast<int>(m)))];
    if (g < 0) {
      g = static_cast<int>(count.size());
      count.push_back(0);
    }
    groups.of[m] = g;
    groups.position[m] = count[static_cast<size_t>(g)]++;
  }
  groups.first.assign(count.size() + 1, 0);
  for (size_t g = 0; g < count.size(); ++g) groups.first[g + 1] = groups.first[g] + count[g];
  groups.members.resize(n);
  for (size_t m = 0; m < n; ++m)
    groups.members[groups.first[static_cast<size_t>(groups.of[m])] + groups.position[m]] = m;
  return groups;
}

uint64_t bits_of(double value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

struct KeyHash {
  size_t operator()(const std::vector<uint64_t>& key) const {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t v : key) h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return static_cast<size_t>(h);
  }
};

// A class's representative, priced: each member's arrival, its bottleneck given as the
// link's place in the group's numbering of its links.
using ClassArrivals = std::vector<Arrival>;

class StepPricer {
public:
  StepPricer(const Step& step, const ModelInput& in, const Network& network, LinkFacts& facts)
      : step_(step), in_(in), network_(network), facts_(facts) {
    routes_.latency.reserve(step.flows.size());
    routes_.first.reserve(step.flows.size() + 1);
    for (const Flow& flow : step.flows) {
      routes_.latency.push_back(
          network.append_route(model_endpoint(in, flow.src), model_endpoint(in, flow.dst), routes_.links));
      routes_.first.push_back(routes_.links.size());
    }
    local_.assign(network.link_count(), -1);
    groups_ = group_messages(routes_, network.link_count());
  }

  StepCost price() {
    std::unordered_map<std::vector<uint64_t>, size_t, KeyHash> classes;
    std::vector<size_t> class_of(groups_.size());
    group_links_first_.assign(1, 0);
    std::vector<uint64_t> key;  // reused: a group of a class already met costs no allocation
    for (size_t g = 0; g < groups_.size(); ++g) {
      describe(g, key);
      auto it = classes.find(key);
      if (it == classes.end()) {
        it = classes.emplace(key, priced_.size()).first;
        priced_.push_back(price_group(g));
      }
      class_of[g] = it->second;
    }
    StepCost cost;
    for (size_t m = 0; m < step_.flows.size(); ++m) {
      const size_t g = static_cast<size_t>(groups_.of[m]);
      const Arrival& a = priced_[class_of[g]][groups_.position[m]];
      if (a.finish < cost.time) continue;
      cost.time = a.finish;
      cost.bottleneck = a.bottleneck >= 0 ? group_links_[group_links_first_[g] + static_cast<size_t>(a.bottleneck)] : -1;
      cost.sharing = a.sharing;
    }
    return cost;
  }

private:
  // What the fluid run reads of group g's messages, into `key`, its links numbered in the
  // order the group first crosses them (appended to group_links_): equal for two groups of
  // one class.
  void describe(size_t g, std::vector<uint64_t>& key) {
    key.clear();
    const size_t links_before = group_links_.size();
    for (size_t k = groups_.first[g]; k < groups_.first[g + 1]; ++k) {
      const size_t m = groups_.members[k];
      const Flow& flow = step_.flows[m];
      key.insert(key.end(), {bits_of(flow.bytes), static_cast<uint64_t>(flow.order), bits_of(routes_.latency[m]),
                             static_cast<uint64_t>(flow.src == flow.dst), routes_.length(m)});
      if (in_.message_cost) {
        const MessagePrice& price =
            in_.message_cost->price_for(model_endpoint(in_, flow.src), model_endpoint(in_, flow.dst), flow.bytes);
        const double post =
            post_overhead_of(in_.message_cost.get(), model_endpoint(in_, flow.src), model_endpoint(in_, flow.dst), flow.bytes);
        key.insert(key.end(), {bits_of(price.wire_factor), bits_of(price.hop_latency), bits_of(price.rate_cap), bits_of(post)});
      }
      for (const int* l = routes_.begin(m); l != routes_.end(m); ++l) {
        const int id = *l;
        int& local = local_[static_cast<size_t>(id)];
        if (local < 0) {
          local = static_cast<int>(group_links_.size() - links_before);
          group_links_.push_back(id);
        }
        const auto [bandwidth, shared] = facts_.of(network_, id);
        key.insert(key.end(), {static_cast<uint64_t>(local), bandwidth, static_cast<uint64_t>(shared)});
      }
    }
    for (size_t k = links_before; k < group_links_.size(); ++k) local_[static_cast<size_t>(group_links_[k])] = -1;
    group_links_first_.push_back(group_links_.size());
  }

  // Group g alone in a fluid run, its ranks numbered in the order they appear; each
  // arrival's bottleneck as its place among the group's links.
  ClassArrivals price_group(size_t g) {
    std::unordered_map<int, int> rank_of;
    std::vector<int> endpoints;
    auto local_rank = [&](int rank) {
      auto [it, added] = rank_of.try_emplace(rank, static_cast<int>(endpoints.size()));
      if (added) endpoints.push_back(model_endpoint(in_, rank));
      return it->second;
    };
    std::vector<FluidMessage> messages;
    for (size_t k = groups_.first[g]; k < groups_.first[g + 1]; ++k) {
      Flow flow = step_.flows[groups_.members[k]];
      flow.src = local_rank(flow.src);
      flow.dst = local_rank(flow.dst);
      messages.push_back({flow, 0});
    }
    ClassArrivals arrivals = run_fluid(messages, in_, network_, endpoints, &facts_);
    const size_t begin = group_links_first_[g], end = group_links_first_[g + 1];
    for (size_t k = begin; k < end; ++k) local_[static_cast<size_t>(group_links_[k])] = static_cast<int>(k - begin);
    for (Arrival& a : arrivals)
      if (a.bottleneck >= 0) a.bottleneck = local_[static_cast<size_t>(a.bottleneck)];
    for (size_t k = begin; k < end; ++k) local_[static_cast<size_t>(group_links_[k])] = -1;
    return arrivals;
  }

  const Step& step_;
  const ModelInput& in_;
  const Network& network_;
  LinkFacts& facts_;
  StepRoutes routes_;                        // by message
  Groups groups_;
  std::vector<int> local_;                   // by network link: its number in the group described (-1: none)
  std::vector<int> group_links_;             // each group's links in its numbering, group after group
  std::vector<size_t> group_links_first_;
  std::vector<ClassArrivals> priced_;        // by class
};

}  // namespace

StepCost price_step_by_class(const Step& step, const ModelInput& in, const Network& network, LinkFacts* facts) {
  if (step.flows.empty()) return {};
  LinkFacts own;
  return StepPricer(step, in, network, facts != nullptr ? *facts : own).price();
}

StepCost price_step_whole(const Step& step, const ModelInput& in, const Network& network) {
  std::vector<FluidMessage> messages;
  messages.reserve(step.flows.size());
  for (const Flow& flow : step.flows) messages.push_back({flow, 0});
  return slowest_arrival(run_fluid(messages, in, network));
}

}  // namespace collsim
