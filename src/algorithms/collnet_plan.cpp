#include "algorithms/collnet_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "algorithms/hierarchy.hpp"

namespace collsim {

CollNetPlan::CollNetPlan(const std::vector<int>& locality, size_t count, size_t chunk_elems, bool chain, int lanes,
                         int lag)
    : nodes_(locality_groups(locality)), node_of_(locality.size()), member_of_(locality.size()), count_(count),
      lanes_(chain ? std::max(1, lanes) : 1), lag_(std::max(0, lag)), chain_(chain) {
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (nodes_[n].size() != nodes_.front().size()) throw std::logic_error("CollNetPlan: CollNet needs nodes of equal size");
    for (size_t m = 0; m < nodes_[n].size(); ++m) {
      node_of_[static_cast<size_t>(nodes_[n][m])] = static_cast<int>(n);
      member_of_[static_cast<size_t>(nodes_[n][m])] = static_cast<int>(m);
    }
  }
  const size_t per = std::max<size_t>(1, chunk_elems);
  const size_t lane = (count + static_cast<size_t>(lanes_) - 1) / static_cast<size_t>(lanes_);
  chunks_ = static_cast<int>(std::max<size_t>(1, (lane + per - 1) / per));
}

Chunk CollNetPlan::chunk(int lane, int j) const {
  const Chunk l = even_chunk(count_, lanes_, lane);
  Chunk c = even_chunk(l.count, chunks_, j);
  c.offset += l.offset;
  return c;
}

Chunk CollNetPlan::slice(int j, int member) const {
  const Chunk c = chunk(0, j);
  Chunk s = even_chunk(c.count, static_cast<int>(nodes_.front().size()), member);
  s.offset += c.offset;
  return s;
}

void CollNetPlan::direct(int rank, std::vector<Message>& out) const {
  const auto& node = nodes_[static_cast<size_t>(node_of_[static_cast<size_t>(rank)])];
  const int me = member_of(rank), g = static_cast<int>(node.size());
  for (int j = 0; j < chunks_; ++j) {
    for (int m = 0; m < g; ++m) {
      if (m == me) continue;
      const int mate = node[static_cast<size_t>(m)];
      out.push_back({j, Kind::scatter, 0, j, mate, true, slice(j, m)});
      out.push_back({j, Kind::scatter, 0, j, mate, false, slice(j, me), true});
      out.push_back({j + 3 + lag_, Kind::gather, 0, j, mate, true, slice(j, me)});
      out.push_back({j + 3 + lag_, Kind::gather, 0, j, mate, false, slice(j, m)});
    }
    out.push_back({j + 1, Kind::to_switch, 0, j, -1, true, slice(j, me)});
    out.push_back({j + 2, Kind::from_switch, 0, j, -1, false, slice(j, me), false, lag_});
  }
}

void CollNetPlan::chain(int rank, std::vector<Message>& out) const {
  const auto& node = nodes_[static_cast<size_t>(node_of_[static_cast<size_t>(rank)])];
  const int me = member_of(rank), g = static_cast<int>(node.size());
  for (int lane = 0; lane < lanes_; ++lane) {
    const int head = lane % g, k = mod(me - head - 1, g);  // my position in the lane's chain
    auto at = [&](int position) { return node[static_cast<size_t>((head + 1 + position) % g)]; };
    for (int j = 0; j < chunks_; ++j) {
      const Chunk c = chunk(lane, j);
      // the result passes down from position k to k-1 at step down(k)
      auto down = [&](int position) { return j + g + 1 + lag_ + (g - 1 - position); };
      if (k > 0) out.push_back({j + k - 1, Kind::chain_up, lane, j, at(k - 1), false, c, true});
      if (k < g - 1) {
        out.push_back({j + k, Kind::chain_up, lane, j, at(k + 1), true, c});
        out.push_back({down(k + 1), Kind::chain_down, lane, j, at(k + 1), false, c});
      } else {
        out.push_back({j + g - 1, Kind::to_switch, lane, j, -1, true, c});
        out.push_back({j + g, Kind::from_switch, lane, j, -1, false, c, false, lag_});
      }
      if (k > 0) out.push_back({down(k), Kind::chain_down, lane, j, at(k - 1), true, c});
    }
  }
}

namespace {

void sort_messages(std::vector<CollNetPlan::Message>& out) {
  std::sort(out.begin(), out.end(), [](const CollNetPlan::Message& a, const CollNetPlan::Message& b) {
    return std::tie(a.step, a.kind, a.lane, a.chunk, a.peer, a.send) < std::tie(b.step, b.kind, b.lane, b.chunk, b.peer, b.send);
  });
}

}  // namespace

std::vector<CollNetPlan::Message> CollNetPlan::messages_of(int rank) const {
  std::vector<Message> out;
  if (chain_) chain(rank, out);
  else direct(rank, out);
  sort_messages(out);
  return out;
}

// The switch's side of each of its members' messages with it: what a GPU sends, the switch
// receives (a contribution to its reduction over the nodes), and the other way round.
std::vector<CollNetPlan::Message> CollNetPlan::messages_of_switch(const std::vector<int>& members) const {
  std::vector<Message> out;
  for (int rank : members)
    for (Message m : messages_of(rank))
      if (m.peer < 0) {
        m.peer = rank;
        m.send = !m.send;
        m.reduce = m.kind == Kind::to_switch;
        out.push_back(m);
      }
  sort_messages(out);
  return out;
}

}  // namespace collsim
