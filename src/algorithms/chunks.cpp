#include "algorithms/chunks.hpp"

#include <algorithm>

namespace collsim {

std::vector<Chunk> split_evenly(size_t count, int parts) {
  std::vector<Chunk> chunks(static_cast<size_t>(parts));
  const size_t base = count / static_cast<size_t>(parts);
  const size_t extra = count % static_cast<size_t>(parts);
  size_t offset = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    chunks[i] = {offset, base + (i < extra ? 1 : 0)};
    offset += chunks[i].count;
  }
  return chunks;
}

std::vector<Chunk> split_into_segments(size_t count, size_t segment) {
  segment = std::max<size_t>(segment, 1);
  std::vector<Chunk> segments;
  for (size_t offset = 0; offset < count; offset += segment) segments.push_back({offset, std::min(segment, count - offset)});
  if (segments.empty()) segments.push_back({0, 0});
  return segments;
}

}  // namespace collsim
