#include "algorithms/nvls_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "algorithms/hierarchy.hpp"

namespace collsim {

NvlsPlan::NvlsPlan(const std::vector<int>& locality, size_t count, size_t chunk_elems, bool tree, int lag)
    : NvlsPlan(locality, count, chunk_elems, tree ? NvlsAcross::tree : NvlsAcross::none, lag) {}

NvlsPlan::NvlsPlan(const std::vector<int>& locality, size_t count, size_t chunk_elems, NvlsAcross across, int lag)
    : nodes_(locality_groups(locality)), node_of_(locality.size()), member_of_(locality.size()), count_(count),
      tree_(across == NvlsAcross::tree && nodes_.size() > 1), ring_(across == NvlsAcross::ring && nodes_.size() > 1),
      lag_(std::max(0, lag)) {
  const size_t per = std::max<size_t>(1, chunk_elems);
  chunks_ = static_cast<int>(std::max<size_t>(1, (count + per - 1) / per));
  for (size_t n = 0; n < nodes_.size(); ++n)
    for (size_t m = 0; m < nodes_[n].size(); ++m) {
      node_of_[static_cast<size_t>(nodes_[n][m])] = static_cast<int>(n);
      member_of_[static_cast<size_t>(nodes_[n][m])] = static_cast<int>(m);
      if ((tree_ || ring_) && nodes_[n].size() != nodes_.front().size())
        throw std::logic_error("NvlsPlan: a tree or ring across nodes needs nodes of equal size");
    }
  if (!tree_) return;
  const auto trees = double_binary_tree(nodes());
  for (int t = 0; t < 2; ++t) {
    auto& links = links_[t];
    links.resize(nodes_.size());
    std::vector<int> order{trees[static_cast<size_t>(t)].root};  // parents before children
    for (size_t i = 0; i < order.size(); ++i) {
      const int n = order[i];
      links[static_cast<size_t>(n)].parent = trees[static_cast<size_t>(t)].parent[static_cast<size_t>(n)];
      links[static_cast<size_t>(n)].children = trees[static_cast<size_t>(t)].children[static_cast<size_t>(n)];
      for (int child : links[static_cast<size_t>(n)].children) {
        links[static_cast<size_t>(child)].depth = links[static_cast<size_t>(n)].depth + 1;
        order.push_back(child);
      }
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      for (int child : links[static_cast<size_t>(*it)].children)
        links[static_cast<size_t>(*it)].up_delay =
            std::max(links[static_cast<size_t>(*it)].up_delay, links[static_cast<size_t>(child)].up_delay + 1 + lag_);
    root_delay_[t] = links[static_cast<size_t>(trees[static_cast<size_t>(t)].root)].up_delay;
  }
}

Chunk NvlsPlan::chunk(int j) const { return even_chunk(count_, chunks_, j); }

Chunk NvlsPlan::slice(int n, int j, int member) const {
  const Chunk c = chunk(j);
  Chunk s = even_chunk(c.count, static_cast<int>(nodes_[static_cast<size_t>(n)].size()), member);
  s.offset += c.offset;
  return s;
}

Chunk NvlsPlan::span(int n, const Message& m) const {
  if (m.part == Part::chunk) return chunk(m.chunk);
  const Chunk s = slice(n, m.chunk, m.member);
  if (m.part == Part::slice) return s;
  Chunk piece = even_chunk(s.count, nodes(), m.piece);
  piece.offset += s.offset;
  return piece;
}

int NvlsPlan::offset(int n, int j) const {
  if (ring_) return 2 + 2 * (nodes() - 1) * (1 + lag_);
  if (!tree_) return 2;
  const int t = j % 2;
  return 2 + root_delay_[t] + (1 + lag_) * links_[t][static_cast<size_t>(n)].depth;
}

std::vector<NvlsPlan::Message> NvlsPlan::messages_of(int rank) const {
  std::vector<Message> out;
  const bool is_switch = rank < 0;
  const int n = is_switch ? -1 - rank : node_of(rank);
  const auto& node = nodes_[static_cast<size_t>(n)];
  // With the ring (hierarchical's level, whose messages to and from the switch pay a send/recv's
  // hop) a GPU sends nothing that needs the multicast's result: it takes it as late as the FIFO
  // lets the multicast run ahead, so that the hops of the round trip through the switch overlap
  // the next chunks' steps instead of holding up each step (NCCL's own NVLS pays no hop there).
  const int gather_wait = ring_ ? lag_ : 0;
  for (int j = 0; j < chunks_; ++j) {
    const int t = offset(n, j);
    if (is_switch) {
      for (int m = 0; m < static_cast<int>(node.size()); ++m) {
        const int gpu = node[static_cast<size_t>(m)];
        out.push_back({j, Kind::reduce_up, j, gpu, false, Part::chunk, m});
        out.push_back({j + 1, Kind::reduce_down, j, gpu, true, Part::slice, m});
        out.push_back({j + t, Kind::multicast_up, j, gpu, false, Part::slice, m});
        out.push_back({j + t + 1, Kind::multicast_down, j, gpu, true, Part::chunk, m, gather_wait});
      }
      continue;
    }
    const int me = member_of_[static_cast<size_t>(rank)];
    out.push_back({j, Kind::reduce_up, j, -1, true, Part::chunk, me});
    out.push_back({j + 1, Kind::reduce_down, j, -1, false, Part::slice, me});
    out.push_back({j + t, Kind::multicast_up, j, -1, true, Part::slice, me});
    out.push_back({j + t + 1, Kind::multicast_down, j, -1, false, Part::chunk, me, gather_wait});
    if (ring_) add_ring(out, n, j, me);
    if (!tree_) continue;
    // slice `me` across the nodes, on tree j % 2, between the nodes' GPUs `me`
    const NodeLink& link = links_[j % 2][static_cast<size_t>(n)];
    auto gpu_of = [&](int other) { return nodes_[static_cast<size_t>(other)][static_cast<size_t>(me)]; };
    if (link.parent >= 0) {
      out.push_back({j + 2 + link.up_delay, Kind::tree_up, j, gpu_of(link.parent), true, Part::slice, me, lag_});
      out.push_back({j + offset(link.parent, j), Kind::tree_down, j, gpu_of(link.parent), false, Part::slice, me, lag_});
    }
    for (int child : link.children) {
      const int delay = links_[j % 2][static_cast<size_t>(child)].up_delay;
      out.push_back({j + 2 + delay, Kind::tree_up, j, gpu_of(child), false, Part::slice, me, lag_});
      out.push_back({j + t, Kind::tree_down, j, gpu_of(child), true, Part::slice, me, lag_});
    }
  }
  // (a ring over two nodes sends to and receives from the same GPU in one step: sends first)
  std::sort(out.begin(), out.end(), [](const Message& a, const Message& b) {
    return std::tie(a.step, a.kind, a.chunk, a.peer, b.send) < std::tie(b.step, b.kind, b.chunk, b.peer, a.send);
  });
  return out;
}

// Ring step s of chunk j (s < G-1: reduce-scatter, then allgather) at step j + 2 + s(1 + lag):
// node n's GPU sends piece (n - s) mod G, then (n + 1 - s') mod G, to node n + 1's, and receives
// piece (n - 1 - s) mod G (reduced into its own), then (n - s') mod G, from node n - 1's; after
// the reduce-scatter it holds piece (n + 1) mod G of the slice summed over every node.
void NvlsPlan::add_ring(std::vector<Message>& out, int n, int j, int me) const {
  const int g = nodes();
  auto gpu_of = [&](int node) { return nodes_[static_cast<size_t>((node + g) % g)][static_cast<size_t>(me)]; };
  auto mod = [g](int k) { return ((k % g) + g) % g; };
  for (int s = 0; s < 2 * (g - 1); ++s) {
    const bool reducing = s < g - 1;
    const int at = j + 2 + s * (1 + lag_), back = reducing ? s : s - (g - 1);
    const Kind kind = reducing ? Kind::ring_reduce : Kind::ring_gather;
    const int sent = reducing ? mod(n - back) : mod(n + 1 - back), received = reducing ? mod(n - 1 - back) : mod(n - back);
    out.push_back({at, kind, j, gpu_of(n + 1), true, Part::piece, me, lag_, sent});
    out.push_back({at, kind, j, gpu_of(n - 1), false, Part::piece, me, lag_, received});
  }
}

}  // namespace collsim
