#pragma once
// NCCL's trees (src/graph/trees.cc, connect.cc; src/device/all_reduce.h, runTreeUpDown), as
// collsim's `nccl-tree` runs them and its schedule prices them: one plan of who sends which
// chunk to whom at which step, shared by the algorithm and the model so that both follow the
// same messages.
//
// Inside a node the ranks form a chain; across nodes the chains' heads form NCCL's double
// binary tree over the nodes (tree 0, and its mirror or shift, tree 1). The vector is cut
// into lanes, each running one tree: lane l runs tree l % 2 with its chains starting at member
// l / 2 of every node (so that the lanes' heads, and their NICs, differ), its slice cut into
// chunks. Up: a leaf sends chunk j at step j, a rank with children at step j + d once every
// child's chunk j is in (d: 1 + its children's largest d). Down: the root sends chunk j as
// soon as it is reduced; the others forward each chunk down as soon as they have it, while
// still sending chunks up (NCCL's runTreeSplit: half the threads up, half down, at once).
// A hop across nodes takes 1 + `lag` steps: its receiver waits for a chunk `lag` steps after the
// step that carries it, as late as NCCL's FIFO lets the sender run ahead, so that the network's
// latency overlaps the next chunks instead of coupling each step of the up and down streams.
#include <cstddef>
#include <vector>

#include "algorithms/chunks.hpp"

namespace collsim {

class NcclTrees {
public:
  // `locality[r]`: rank r's node (ranks sharing one form a node, as locality_groups makes
  // them); `lanes` >= 1; each lane's slice of `count` elements in chunks of `chunk_elems`.
  NcclTrees(const std::vector<int>& locality, int lanes, size_t count, size_t chunk_elems, int lag = 0);

  int lanes() const { return static_cast<int>(slices_.size()); }
  int chunks() const { return chunks_; }
  Chunk chunk(int lane, int j) const;

  // One message of a rank's part, at its step (the same step for its sender and receiver).
  struct Message {
    int step = 0;
    int lane = 0;
    int chunk = 0;
    int peer = 0;       // the other end
    bool send = false;  // this rank sends it (else receives it)
    bool up = false;    // towards the root (a partial sum its receiver reduces)
    int wait = 0;       // its receiver waits for it this many steps after `step`
  };
  // Every message the rank sends or receives, by step, then lane, then peer: the order in
  // which both ends of a pair post them.
  std::vector<Message> messages_of(int rank) const;

private:
  struct Link {
    int parent = -1;
    std::vector<int> children;
    int up_delay = 0;    // d: the step of its chunk j's send up is j + d
    int down_offset = 0;  // its chunk j's sends down are at step j + down_offset
  };
  void link_lane(int lane, const std::vector<std::vector<int>>& nodes);
  void time_lane(int lane, const std::vector<std::vector<int>>& nodes);

  int hop_lag(int a, int b) const { return locality_[static_cast<size_t>(a)] == locality_[static_cast<size_t>(b)] ? 0 : lag_; }

  std::vector<int> locality_;
  int lag_ = 0;
  int chunks_ = 1;
  std::vector<Chunk> slices_;
  std::vector<size_t> chunk_elems_;        // by lane
  std::vector<std::vector<Link>> links_;   // [lane][rank]
};

}  // namespace collsim
