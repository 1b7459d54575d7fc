#include "algorithms/nccl_trees.hpp"

#include <algorithm>
#include <tuple>

#include "algorithms/hierarchy.hpp"
#include "algorithms/pipelined_rounds.hpp"

namespace collsim {

NcclTrees::NcclTrees(const std::vector<int>& locality, int lanes, size_t count, size_t chunk_elems, int lag)
    : locality_(locality), lag_(std::max(0, lag)) {
  const auto nodes = locality_groups(locality);
  slices_ = split_evenly(count, lanes);
  size_t largest = 0;
  for (const Chunk& slice : slices_) largest = std::max(largest, slice.count);
  const size_t per = std::max<size_t>(1, chunk_elems);
  chunks_ = static_cast<int>(std::max<size_t>(1, (largest + per - 1) / per));
  links_.assign(static_cast<size_t>(lanes), std::vector<Link>(locality.size()));
  for (int lane = 0; lane < lanes; ++lane) {
    link_lane(lane, nodes);
    time_up(lane, nodes);
  }
  // every rank's chunks up come before its chunks down, in every lane (nccl_trees.hpp)
  int down_from = 0;
  for (int lane = 0; lane < lanes; ++lane) down_from = std::max(down_from, links_[static_cast<size_t>(lane)][static_cast<size_t>(roots_[static_cast<size_t>(lane)])].up_delay);
  for (int lane = 0; lane < lanes; ++lane) time_down(lane, down_from + chunks_);
}

Chunk NcclTrees::chunk(int lane, int j) const {
  const Chunk& slice = slices_[static_cast<size_t>(lane)];
  Chunk c = even_chunk(slice.count, chunks_, j);
  c.offset += slice.offset;
  return c;
}

namespace {
// The member of `node` at position `i` of a chain that starts at member `head` (turned).
int at(const std::vector<int>& node, int head, int i) {
  const int g = static_cast<int>(node.size());
  return node[static_cast<size_t>(mod(head + i, g))];
}
}  // namespace

// Chains inside the nodes, the heads on the lane's node tree.
void NcclTrees::link_lane(int lane, const std::vector<std::vector<int>>& nodes) {
  const int n = static_cast<int>(nodes.size());
  const Tree node_tree = double_binary_tree(n)[static_cast<size_t>(lane % 2)];
  const int head = lane / 2;
  auto& links = links_[static_cast<size_t>(lane)];
  for (int k = 0; k < n; ++k) {
    const auto& node = nodes[static_cast<size_t>(k)];
    const int g = static_cast<int>(node.size());
    for (int i = 0; i < g; ++i) {
      Link& link = links[static_cast<size_t>(at(node, head, i))];
      if (i > 0) link.parent = at(node, head, i - 1);
      if (i + 1 < g) link.children.push_back(at(node, head, i + 1));
    }
    Link& top = links[static_cast<size_t>(at(node, head, 0))];
    const int parent = node_tree.parent[static_cast<size_t>(k)];
    if (parent >= 0) top.parent = at(nodes[static_cast<size_t>(parent)], head, 0);
    for (int child : node_tree.children[static_cast<size_t>(k)]) top.children.push_back(at(nodes[static_cast<size_t>(child)], head, 0));
  }
}

// d from the leaves up.
void NcclTrees::time_up(int lane, const std::vector<std::vector<int>>& nodes) {
  auto& links = links_[static_cast<size_t>(lane)];
  const int n = static_cast<int>(nodes.size());
  const Tree node_tree = double_binary_tree(n)[static_cast<size_t>(lane % 2)];
  const int root = at(nodes[static_cast<size_t>(node_tree.root)], lane / 2, 0);
  roots_.push_back(root);
  std::vector<int>& order = orders_.emplace_back(1, root);  // parents before children
  for (size_t i = 0; i < order.size(); ++i)
    for (int child : links[static_cast<size_t>(order[i])].children) order.push_back(child);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Link& link = links[static_cast<size_t>(*it)];
    for (int child : link.children)
      link.up_delay = std::max(link.up_delay, links[static_cast<size_t>(child)].up_delay + 1 + hop_lag(child, *it));
  }
}

// The down offsets from the root, which sends chunk j down at step `root_offset` + j.
void NcclTrees::time_down(int lane, int root_offset) {
  auto& links = links_[static_cast<size_t>(lane)];
  for (int rank : orders_[static_cast<size_t>(lane)]) {
    Link& link = links[static_cast<size_t>(rank)];
    link.down_offset = link.parent < 0 ? root_offset
                                       : links[static_cast<size_t>(link.parent)].down_offset + 1 + hop_lag(link.parent, rank);
  }
}

std::vector<NcclTrees::Message> NcclTrees::messages_of(int rank) const {
  std::vector<Message> out;
  // each hop of a chunk: its head; with the first chunk's, the connection's body (nccl_trees.hpp)
  auto add = [&out](Message m) {
    out.push_back(m);
    if (m.chunk > 0) return;
    m.body = true;
    m.wait = at_end_wait_steps;  // both ends wait for it in their last round
    out.push_back(m);
  };
  for (int lane = 0; lane < lanes(); ++lane) {
    const auto& links = links_[static_cast<size_t>(lane)];
    const Link& me = links[static_cast<size_t>(rank)];
    for (int j = 0; j < chunks_; ++j) {
      if (me.parent >= 0) {
        const int lag = hop_lag(rank, me.parent);
        add({j + me.up_delay, lane, j, me.parent, true, true, lag});
        add({j + links[static_cast<size_t>(me.parent)].down_offset, lane, j, me.parent, false, false, lag});
      }
      for (int child : me.children) {
        const int lag = hop_lag(rank, child);
        add({j + links[static_cast<size_t>(child)].up_delay, lane, j, child, false, true, lag});
        add({j + me.down_offset, lane, j, child, true, false, lag});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const Message& a, const Message& b) {
    return std::tie(a.step, a.lane, a.peer, a.send, a.body) < std::tie(b.step, b.lane, b.peer, b.send, b.body);
  });
  return out;
}

}  // namespace collsim
