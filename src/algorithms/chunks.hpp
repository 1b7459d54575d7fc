#pragma once
// Splitting a vector into contiguous pieces for ring and pipeline algorithms.
#include <cstddef>
#include <vector>

namespace collsim {

struct Chunk {
  size_t offset = 0;
  size_t count = 0;
};

// `parts` chunks covering [0, count): the first count % parts chunks hold one element
// more than the others. Chunks are empty when count < parts.
std::vector<Chunk> split_evenly(size_t count, int parts);

// Consecutive segments of at most `segment` elements; always at least one (maybe empty).
std::vector<Chunk> split_into_segments(size_t count, size_t segment);

// Euclidean remainder: ring arithmetic with negative steps.
inline int mod(int a, int m) { return ((a % m) + m) % m; }

}  // namespace collsim
