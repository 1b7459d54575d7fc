#pragma once
// NCCL's trees (src/graph/trees.cc, connect.cc; src/device/all_reduce.h, runTreeSplit), as
// collsim's `nccl-tree` runs them and its schedule prices them: one plan of who sends which
// chunk to whom at which step, shared by the algorithm and the model so that both follow the
// same messages.
//
// Inside a node the ranks form a chain; across nodes the chains' heads form NCCL's double
// binary tree over the nodes (tree 0, and its mirror or shift, tree 1). The vector is cut
// into lanes, each running one tree: lane l runs tree l % 2 with its chains starting at member
// l / 2 of every node (so that the lanes' heads, and their NICs, differ), its slice cut into
// chunks. Up: a leaf sends its chunks at once, a rank with children each chunk once every
// child's is in, reduced; the root sends each chunk down once it has it, and every other rank
// forwards each chunk down as it comes.
//
// Two streams per rank (NCCL's runTreeSplit, src/device/all_reduce.h, NCCL 2.25.1, commit
// 80f6bda4, which Tree/Simple, Tree/LL and Tree/LL128 all run): on every channel (a lane, a block
// of its own) a rank other than the root runs its reduce up and its broadcast down apart, half of
// the channel's threads each (Simple; 70% and 30% with LL and LL128), so that a chunk coming down
// is passed on whatever the rank's chunks up are doing; the root runs one sequence (each chunk
// received, reduced and sent down). collsim runs a rank's streams, on every lane, in one sequence
// of rounds merged in time order: a chunk's head (below) carries no bytes, so when each stream
// passes its chunks on is known before the run (its heads' hop latencies added up the tree:
// `hop_inside` on a hop inside a node, `hop_across` between nodes; NCCL's hwLat in its transport),
// and a rank whose rounds follow those times waits for nothing another stream holds: each stream
// sends when it would send on its own. A stream's sends are step key x chunks + chunk, the keys
// the streams' times in order (ties by the hops behind them: a rank never passes a chunk on
// before its sender sent it); a receive is waited for in the round before the step that uses it
// (a leaf's chunks down, used by nothing, in its last round).
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
  // them); `lanes` >= 1; each lane's slice of `count` elements in chunks of `chunk_elems`; a
  // head's hop latency inside a node and between nodes (seconds; they order the streams).
  NcclTrees(const std::vector<int>& locality, int lanes, size_t count, size_t chunk_elems, double hop_inside = 0,
            double hop_across = 0);

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

  // The last step of every rank (a receive used by nothing is waited for then).
  int last_step() const { return keys_ * chunks_ - 1; }

private:
  // When a stream passes its chunks on: the time its heads are all in (a hop costs its latency),
  // and the hops behind it (a tie-break: a rank passes a chunk on after its sender sent it).
  struct Ready {
    double at = 0;
    int hops = 0;
    bool operator<(const Ready& other) const { return at < other.at || (at == other.at && hops < other.hops); }
  };
  struct Link {
    int parent = -1;
    std::vector<int> children;
    Ready up;     // it sends its chunks up (the root: down, once they are in)
    Ready down;   // it sends its chunks down (the root: at `up`)
    int up_key = 0, down_key = 0;  // their order among every stream's Ready
  };
  void link_lane(int lane, const std::vector<std::vector<int>>& nodes);
  double hop(int a, int b) const {
    return locality_[static_cast<size_t>(a)] == locality_[static_cast<size_t>(b)] ? hop_inside_ : hop_across_;
  }
  void time_lane(int lane, const std::vector<std::vector<int>>& nodes);
  void number_keys();
  int step(int key, int chunk) const { return key * chunks_ + chunk; }

  std::vector<int> locality_;
  double hop_inside_ = 0, hop_across_ = 0;
  int chunks_ = 1;
  int keys_ = 1;
  std::vector<Chunk> slices_;
  std::vector<std::vector<Link>> links_;   // [lane][rank]
};

}  // namespace collsim
