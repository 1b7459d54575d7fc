#include "model/network.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <fmt/format.h>
#include <unordered_map>

#include "model/cost_model.hpp"

namespace collsim {
namespace {

class UniformNetwork : public Network {
public:
  explicit UniformNetwork(const ModelInput& in) {
    const SharedRoutes plain{in.alpha, in.bandwidth, 1};
    const SharedRoutes intra = in.intra.value_or(plain), inter = in.inter.value_or(plain);
    for (size_t g = 0; g < in.group_sizes.size(); ++g) group_.insert(group_.end(), static_cast<size_t>(in.group_sizes[g]), static_cast<int>(g));
    // the ranks, then the switches or servers' processes after them (ModelInput::switch_endpoints)
    const int endpoints = in.p + static_cast<int>(in.switch_endpoints.size());
    group_.resize(static_cast<size_t>(endpoints), 0);
    for (int r = 0; r < endpoints; ++r) {
      // links 4r, 4r+1: rank r's uplink and downlink inside its group; 4r+2, 4r+3: between groups
      links_.push_back({fmt::format("rank-{}_UP", r), intra.per_message_bandwidth(), true});
      links_.push_back({fmt::format("rank-{}_DOWN", r), intra.per_message_bandwidth(), true});
      links_.push_back({fmt::format("rank-{}_inter_UP", r), inter.per_message_bandwidth(), true});
      links_.push_back({fmt::format("rank-{}_inter_DOWN", r), inter.per_message_bandwidth(), true});
    }
    intra_alpha_ = intra.alpha;
    inter_alpha_ = inter.alpha;
  }

  const NetworkRoute& route(int from, int to) const override {
    NetworkRoute& route = routes_[static_cast<uint64_t>(from) << 32 | static_cast<uint32_t>(to)];
    if (route.links.empty() && from != to) {
      const bool inside = group_[static_cast<size_t>(from)] == group_[static_cast<size_t>(to)];
      route.latency = inside ? intra_alpha_ : inter_alpha_;
      route.links = {4 * from + (inside ? 0 : 2), 4 * to + (inside ? 1 : 3)};
    }
    return route;
  }

  const NetworkLink& link(int id) const override { return links_[static_cast<size_t>(id)]; }
  size_t link_count() const override { return links_.size(); }

private:
  std::vector<int> group_;
  std::vector<NetworkLink> links_;
  double intra_alpha_ = 0, inter_alpha_ = 0;
  mutable std::unordered_map<uint64_t, NetworkRoute> routes_;
};

class SlowedNetwork : public Network {
public:
  SlowedNetwork(std::shared_ptr<const Network> base, const std::vector<std::pair<int, double>>& bandwidths)
      : base_(std::move(base)) {
    for (const auto& [id, bandwidth] : bandwidths) {
      NetworkLink link = base_->link(id);
      link.bandwidth = bandwidth;
      slowed_.insert_or_assign(id, std::move(link));
    }
  }
  const NetworkRoute& route(int from, int to) const override { return base_->route(from, to); }
  const NetworkLink& link(int id) const override {
    const auto found = slowed_.find(id);
    return found != slowed_.end() ? found->second : base_->link(id);
  }
  size_t link_count() const override { return base_->link_count(); }
  void read_links(int from, int to, std::vector<int>& links) const override { base_->read_links(from, to, links); }
  double append_route(int from, int to, std::vector<int>& links) const override {
    return base_->append_route(from, to, links);
  }

private:
  std::shared_ptr<const Network> base_;
  std::unordered_map<int, NetworkLink> slowed_;
};

}  // namespace

std::shared_ptr<const Network> slowed_network(std::shared_ptr<const Network> base, const std::vector<int>& slowed,
                                              double factor) {
  std::vector<std::pair<int, double>> bandwidths;
  for (int id : slowed) bandwidths.emplace_back(id, base->link(id).bandwidth * factor);
  return std::make_shared<SlowedNetwork>(std::move(base), bandwidths);
}

std::shared_ptr<const Network> network_with_bandwidths(std::shared_ptr<const Network> base,
                                                       const std::vector<std::pair<int, double>>& bandwidths) {
  return std::make_shared<SlowedNetwork>(std::move(base), bandwidths);
}

std::shared_ptr<const Network> uniform_network(const ModelInput& in) { return std::make_shared<UniformNetwork>(in); }

std::optional<SharedRoutes> shared_routes(const Network& network, const std::vector<std::pair<int, int>>& messages) {
  if (messages.empty()) return std::nullopt;
  std::unordered_map<int, int> crossing;
  SharedRoutes cost{0, std::numeric_limits<double>::infinity(), 1};
  std::vector<int> links;  // every message's route, read once (not kept by the network), in order
  for (const auto& [from, to] : messages) {
    const size_t first = links.size();
    cost.alpha = std::max(cost.alpha, network.append_route(from, to, links));
    for (size_t k = first; k < links.size(); ++k) ++crossing[links[k]];
  }
  // The message left the least bandwidth by some link of its route paces the step.
  double slowest = -1;
  for (int id : links) {
    const NetworkLink& link = network.link(id);
    const int sharing = link.shared ? crossing[id] : 1;
    const double share = link.bandwidth / sharing;
    if (slowest < 0 || share < slowest) {
      slowest = share;
      cost.bandwidth = link.bandwidth;
      cost.sharing = sharing;
    }
  }
  return cost;
}

}  // namespace collsim
