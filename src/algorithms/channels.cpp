#include "algorithms/channels.hpp"

#include "algorithms/algorithms.hpp"
#include "algorithms/hierarchy.hpp"

#include <stdexcept>

namespace collsim {

std::vector<int> channel_ring(const std::vector<std::vector<int>>& groups, int p, int channel) {
  // where each rank sits: its group and its index in it
  std::vector<int> group_of(static_cast<size_t>(p), -1), index_of(static_cast<size_t>(p), -1);
  for (size_t k = 0; k < groups.size(); ++k)
    for (size_t i = 0; i < groups[k].size(); ++i) {
      group_of[static_cast<size_t>(groups[k][i])] = static_cast<int>(k);
      index_of[static_cast<size_t>(groups[k][i])] = static_cast<int>(i);
    }
  std::vector<int> ring;
  ring.reserve(static_cast<size_t>(p));
  for (int rank = 0; rank < p; ++rank) {
    if (group_of[static_cast<size_t>(rank)] < 0) throw std::logic_error("channel_ring: a rank in no group");
    const auto& group = groups[static_cast<size_t>(group_of[static_cast<size_t>(rank)])];
    const int g = static_cast<int>(group.size());
    ring.push_back(group[static_cast<size_t>(mod(index_of[static_cast<size_t>(rank)] + channel, g))]);
  }
  return ring;
}

std::vector<std::vector<int>> turned_groups(const std::vector<std::vector<int>>& groups, int channel) {
  std::vector<std::vector<int>> turned;
  for (const auto& group : groups) {
    const int g = static_cast<int>(group.size());
    turned.emplace_back();
    for (int i = 0; i < g; ++i) turned.back().push_back(group[static_cast<size_t>(mod(i + channel, g))]);
  }
  return turned;
}

std::vector<Chunk> split_slice(const Chunk& slice, int parts) {
  std::vector<Chunk> chunks = split_evenly(slice.count, parts);
  for (Chunk& chunk : chunks) chunk.offset += slice.offset;
  return chunks;
}

std::vector<RingTask> channel_ring_tasks(const Comm& comm, size_t count, int channels) {
  std::vector<int> locality;
  for (int r = 0; r < comm.size(); ++r) locality.push_back(comm.locality(r));
  const auto groups = locality_groups(locality);
  const auto slices = channel_slices(count, channels);
  std::vector<RingTask> rings;
  for (int c = 0; c < channels; ++c) {
    RingTask ring{channel_ring(groups, comm.size(), c), 0, slices[static_cast<size_t>(c)]};
    while (ring.members[static_cast<size_t>(ring.position)] != comm.rank()) ++ring.position;
    rings.push_back(std::move(ring));
  }
  return rings;
}

}  // namespace collsim
