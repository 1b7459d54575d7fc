// What each parameter server holds of a vector: an even shard, or whole variables
// (algorithms/server_deployment.hpp).
#include "algorithms/server_deployment.hpp"

namespace collsim {

std::vector<std::vector<Chunk>> server_spans(const ServerDeployment& deployment, size_t elems, int servers) {
  std::vector<std::vector<Chunk>> spans(static_cast<size_t>(servers));
  if (!deployment.pieces) {
    const auto shards = split_evenly(elems, servers);
    for (size_t s = 0; s < spans.size(); ++s) spans[s].push_back(shards[s]);
    return spans;
  }
  for (const ServerPiece& piece : *deployment.pieces) spans[static_cast<size_t>(piece.server)].push_back({piece.offset, piece.count});
  return spans;
}

}  // namespace collsim
