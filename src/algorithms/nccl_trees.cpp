#include "algorithms/nccl_trees.hpp"

#include <algorithm>
#include <tuple>

#include "algorithms/hierarchy.hpp"
#include "algorithms/pipelined_rounds.hpp"

namespace collsim {

NcclTrees::NcclTrees(const std::vector<int>& locality, int lanes, size_t count, size_t chunk_elems, double hop_inside,
                     double hop_across)
    : locality_(locality), hop_inside_(std::max(0.0, hop_inside)), hop_across_(std::max(0.0, hop_across)) {
  const auto nodes = locality_groups(locality);
  slices_ = split_evenly(count, lanes);
  size_t largest = 0;
  for (const Chunk& slice : slices_) largest = std::max(largest, slice.count);
  const size_t per = std::max<size_t>(1, chunk_elems);
  chunks_ = static_cast<int>(std::max<size_t>(1, (largest + per - 1) / per));
  links_.assign(static_cast<size_t>(lanes), std::vector<Link>(locality.size()));
  for (int lane = 0; lane < lanes; ++lane) {
    link_lane(lane, nodes);
    time_lane(lane, nodes);
  }
  number_keys();
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

// Each stream's Ready: up from the leaves (a rank's chunks are all in once its children's have
// crossed their hop), then down from the root, which sends down as soon as its chunks up are in.
void NcclTrees::time_lane(int lane, const std::vector<std::vector<int>>& nodes) {
  auto& links = links_[static_cast<size_t>(lane)];
  const Tree node_tree = double_binary_tree(static_cast<int>(nodes.size()))[static_cast<size_t>(lane % 2)];
  const int root = at(nodes[static_cast<size_t>(node_tree.root)], lane / 2, 0);
  std::vector<int> order(1, root);  // parents before children
  for (size_t i = 0; i < order.size(); ++i)
    for (int child : links[static_cast<size_t>(order[i])].children) order.push_back(child);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Link& link = links[static_cast<size_t>(*it)];
    for (int child : link.children) {
      const Ready& below = links[static_cast<size_t>(child)].up;
      link.up.at = std::max(link.up.at, below.at + hop(child, *it));
      link.up.hops = std::max(link.up.hops, below.hops + 1);
    }
  }
  for (int rank : order) {
    Link& link = links[static_cast<size_t>(rank)];
    if (link.parent < 0) {
      link.down = link.up;
      continue;
    }
    const Ready& above = links[static_cast<size_t>(link.parent)].down;
    link.down = {above.at + hop(link.parent, rank), above.hops + 1};
  }
}

// Every stream's Ready in order, the same on every rank and in the model.
void NcclTrees::number_keys() {
  std::vector<Ready> all;
  for (const auto& lane : links_)
    for (const Link& link : lane) {
      all.push_back(link.up);
      all.push_back(link.down);
    }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end(), [](const Ready& a, const Ready& b) { return !(a < b) && !(b < a); }),
            all.end());
  keys_ = std::max(1, static_cast<int>(all.size()));
  auto key_of = [&all](const Ready& ready) {
    return static_cast<int>(std::lower_bound(all.begin(), all.end(), ready) - all.begin());
  };
  for (auto& lane : links_)
    for (Link& link : lane) {
      link.up_key = key_of(link.up);
      link.down_key = key_of(link.down);
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
  const int last = last_step();
  for (int lane = 0; lane < lanes(); ++lane) {
    const auto& links = links_[static_cast<size_t>(lane)];
    const Link& me = links[static_cast<size_t>(rank)];
    // a chunk down is waited for before its receiver passes it on (a leaf: in its last round)
    auto down_wait = [&](const Link& receiver, int sent, int j) {
      return receiver.children.empty() ? last - sent : step(receiver.down_key, j) - 1 - sent;
    };
    for (int j = 0; j < chunks_; ++j) {
      if (me.parent >= 0) {
        const Link& parent = links[static_cast<size_t>(me.parent)];
        // up: waited for before the parent sends its own up (the root: down)
        const int up = step(me.up_key, j), down = step(parent.down_key, j);
        add({up, lane, j, me.parent, true, true, step(parent.up_key, j) - 1 - up});
        add({down, lane, j, me.parent, false, false, down_wait(me, down, j)});
      }
      for (int child : me.children) {
        const Link& below = links[static_cast<size_t>(child)];
        const int up = step(below.up_key, j), down = step(me.down_key, j);
        add({up, lane, j, child, false, true, step(me.up_key, j) - 1 - up});
        add({down, lane, j, child, true, false, down_wait(below, down, j)});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const Message& a, const Message& b) {
    return std::tie(a.step, a.lane, a.peer, a.send, a.body) < std::tie(b.step, b.lane, b.peer, b.send, b.body);
  });
  return out;
}

}  // namespace collsim
