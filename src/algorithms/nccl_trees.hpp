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
// child's chunk j is in (d: 1 + its children's largest d). Down: the roots send chunk j at step
// U + j, U being past every lane's last chunk up; the others forward each chunk down the step
// after they have it. Every rank thus runs its chunks up, then its chunks down, in one
// sequence of rounds: the heads (below) move at the hops' latencies, so that a rank's chunks
// up are all in before its first chunk down comes (NCCL's runTreeSplit runs the two streams
// apart, half the threads each; one sequence that interleaved them would hold each stream
// back by the other's latencies). Steps follow time: a hop across nodes takes 1 + `lag` steps (its
// latency is about `lag` + 1 NVLink hops'), its receiver waiting for the head `lag` steps after the
// step that carries it, so that a rank's rounds come in the order its heads arrive.
//
// Cut-through: a rank passes a chunk on as soon as it starts to arrive, not once its last byte
// is in, as NCCL's model prices a tree (a hop costs its hwLat; the bytes cross the tree once at
// the bandwidth: tuning.cc) and as NCCL's LL and LL128 warps do (each passes a line on as it
// arrives: prims_ll.h, prims_ll128.h). A chunk's hop is its head: the chunk's data, priced 0
// bytes (its hop latency alone), which its receiver waits for at the step that uses the chunk.
// The bytes go in one body per connection (a lane's hop, up or down): the lane's whole slice, no
// data, sent with the first chunk's head and waited for by both ends in their last round, so
// that a connection streams its lane's bytes at the lane's ceiling while the heads run ahead.
// A chain of h hops costs h hop latencies + its lane's bytes once, where whole chunks would cost
// (C + h - 1) chunk times over C chunks. (A body on a hop faster than the one that feeds it may
// end before its feeder: a chain's bytes then end up to a body's difference early.)
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
  Chunk slice(int lane) const { return slices_[static_cast<size_t>(lane)]; }

  // One message of a rank's part, at its step (the same step for its sender and receiver).
  struct Message {
    int step = 0;
    int lane = 0;
    int chunk = 0;
    int peer = 0;       // the other end
    bool send = false;  // this rank sends it (else receives it)
    bool up = false;    // towards the root (a partial sum its receiver reduces)
    int wait = 0;       // its receiver waits for it this many steps after `step`
    bool body = false;  // the lane's bytes on this connection, no data (else a chunk's head: its data, 0 bytes)
  };
  // Every message the rank sends or receives, by step, then lane, then peer, a head before its
  // body: the order in which both ends of a pair post them.
  std::vector<Message> messages_of(int rank) const;

private:
  struct Link {
    int parent = -1;
    std::vector<int> children;
    int up_delay = 0;    // d: the step of its chunk j's send up is j + d
    int down_offset = 0;  // its chunk j's sends down are at step j + down_offset
  };
  void link_lane(int lane, const std::vector<std::vector<int>>& nodes);
  int hop_lag(int a, int b) const { return locality_[static_cast<size_t>(a)] == locality_[static_cast<size_t>(b)] ? 0 : lag_; }
  void time_up(int lane, const std::vector<std::vector<int>>& nodes);
  void time_down(int lane, int root_offset);


  std::vector<int> locality_;
  int lag_ = 0;
  int chunks_ = 1;
  std::vector<Chunk> slices_;
  std::vector<size_t> chunk_elems_;        // by lane
  std::vector<std::vector<Link>> links_;   // [lane][rank]
  std::vector<int> roots_;                 // by lane
  std::vector<std::vector<int>> orders_;   // by lane: its ranks, parents before children
};

}  // namespace collsim
