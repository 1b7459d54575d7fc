#pragma once
// NCCL's channels: the vector is split into k slices, and each slice runs its own ring (or
// its own hierarchical scheme) at the same time as the others. One ring over node-major
// ranks leaves a node through one NIC only (the GPU at its end); channel c turns every
// locality group's ring by c members, so that its node crossings leave from GPU c-1 and
// enter at GPU c: with one NIC per GPU (rail:N:G), channels 0 .. G-1 cross nodes through
// G different NICs each way, and all of them carry traffic. Channel 0 is the plain ring.
#include <cstddef>
#include <vector>

#include "algorithms/chunks.hpp"

namespace collsim {

// Channel c's ring over p ranks grouped by locality (locality_groups): position i holds the
// member of rank i's group whose index in the group is (rank i's index + c) mod the group's
// size. Every group keeps its place in the ring, each turned by c.
std::vector<int> channel_ring(const std::vector<std::vector<int>>& groups, int p, int channel);

// Each group's members turned by c (member i of the result is member (i + c) mod g).
std::vector<std::vector<int>> turned_groups(const std::vector<std::vector<int>>& groups, int channel);

// The slice of a vector of `count` elements that channel c of k reduces (split_evenly).
inline std::vector<Chunk> channel_slices(size_t count, int channels) { return split_evenly(count, channels); }

// Chunks of `parts` pieces of `slice`, at the slice's place in the vector.
std::vector<Chunk> split_slice(const Chunk& slice, int parts);

}  // namespace collsim
