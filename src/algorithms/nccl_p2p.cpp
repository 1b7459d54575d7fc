#include "algorithms/nccl_p2p.hpp"

#include <bit>

#include "algorithms/hierarchy.hpp"

namespace collsim {

std::vector<int> nccl_p2p_deltas(int n) {
  std::vector<int> deltas;
  if (n < 1) return deltas;
  const unsigned pow2 = std::bit_ceil(static_cast<unsigned>(n));
  unsigned delta = 0;
  for (unsigned round = 0; round != pow2;) {
    if (delta < static_cast<unsigned>(n)) deltas.push_back(static_cast<int>(delta));
    round += 1;
    delta = (delta + round) & (pow2 - 1);  // NCCL's "Quadratic update"
  }
  return deltas;
}

std::vector<P2pRound> nccl_p2p_schedule(const std::vector<int>& locality, int p, int rank) {
  std::vector<std::vector<int>> nodes = locality.empty() ? std::vector<std::vector<int>>{} : locality_groups(locality);
  bool flat = nodes.empty();
  for (const auto& node : nodes) flat = flat || node.size() != nodes[0].size();
  if (flat) {
    nodes.assign(1, {});
    for (int r = 0; r < p; ++r) nodes[0].push_back(r);
  }
  const int n_nodes = static_cast<int>(nodes.size()), locals = static_cast<int>(nodes[0].size());
  int node = 0, local = 0;
  for (int k = 0; k < n_nodes; ++k)
    for (int i = 0; i < locals; ++i)
      if (nodes[static_cast<size_t>(k)][static_cast<size_t>(i)] == rank) node = k, local = i;
  std::vector<P2pRound> rounds;
  for (const int node_delta : nccl_p2p_deltas(n_nodes)) {
    const auto& send_node = nodes[static_cast<size_t>((node + node_delta) % n_nodes)];
    const auto& recv_node = nodes[static_cast<size_t>((node - node_delta + n_nodes) % n_nodes)];
    for (const int local_delta : nccl_p2p_deltas(locals))
      rounds.push_back({send_node[static_cast<size_t>((local + local_delta) % locals)],
                        recv_node[static_cast<size_t>((local - local_delta + locals) % locals)]});
  }
  return rounds;
}

}  // namespace collsim
