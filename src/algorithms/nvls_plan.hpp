#pragma once
// NCCL's NVLS and NVLSTree allreduces (src/device/all_reduce.h, runNvls / runNvlsTree), as
// `nccl-nvls` and `nccl-nvls-tree` run them and their schedules price them: one plan of
// every message of every GPU and every NVSwitch, at its step.
//
// The vector is cut into chunks, each chunk into one slice per GPU of a node. For chunk j:
//   step j        every GPU sends the chunk to its node's NVSwitch (multimem.ld_reduce's reads);
//   step j+1      the switch sends GPU i the reduction of slice i over the node;
//   (NVLSTree)    GPU i of every node runs a tree over the nodes on slice i (NCCL's double
//                 binary tree, tree j % 2): up to the root node, which sends it back down;
//   step j+T      GPU i sends its (node-, or globally) reduced slice to the switch (multimem.st);
//   step j+T+1    the switch sends every GPU the whole chunk.
//   (ring)        GPU i of every node allreduces slice i over the nodes by a ring (hierarchical's
//                 collective.intra nvls with inter ring): 2(G-1) ring steps of 1/G of the slice each,
//                 one every 1 + `lag` steps (reduce-scatter, then allgather), between GPU i of
//                 node n and GPU i of node n + 1;
// T is 2 on one node; with the ring, 2 + 2(G-1)(1 + lag); with the tree, 2 + the root's up delay + H x the node's depth, a hop
// across nodes taking H = 1 + `lag` steps: its receiver waits for the slice `lag` steps after
// the step that carries it (as late as NCCL's FIFO lets its sender run ahead: fifo - 1), so that
// a network hop's latency overlaps the next chunks' steps instead of stalling each of them.
// Every GPU sends and receives (1 + 1/g) times the vector through its NVLink port (g per node).
#include <cstddef>
#include <vector>

#include "algorithms/chunks.hpp"

namespace collsim {

// What runs across the nodes on each slice: nothing (one node, or nodes that do not reduce with
// each other), NCCL's double binary tree (NVLSTree), or a ring.
enum class NvlsAcross { none, tree, ring };

class NvlsPlan {
public:
  // `locality[r]`: rank r's node (equal sizes with the tree and the ring); `tree`: NVLSTree across nodes.
  NvlsPlan(const std::vector<int>& locality, size_t count, size_t chunk_elems, bool tree, int lag = 0);
  NvlsPlan(const std::vector<int>& locality, size_t count, size_t chunk_elems, NvlsAcross across, int lag);

  int nodes() const { return static_cast<int>(nodes_.size()); }
  int chunks() const { return chunks_; }
  const std::vector<int>& node(int n) const { return nodes_[static_cast<size_t>(n)]; }
  int node_of(int rank) const { return node_of_[static_cast<size_t>(rank)]; }
  Chunk chunk(int j) const;
  Chunk slice(int n, int j, int member) const;  // slice `member` of chunk j in node n

  // What a message carries: the whole chunk, one slice, or piece `piece` of one slice (the ring's).
  enum class Part { chunk, slice, piece };
  // Why: the NVSwitch's reduction (up to it, then its result down), the tree across nodes
  // (up, partial sums the receiver reduces; down), the multicast (up to it, then down).
  // The ring across nodes: its reduce-scatter (partial sums the receiver reduces), its allgather.
  enum class Kind { reduce_up, reduce_down, tree_up, tree_down, multicast_up, multicast_down, ring_reduce, ring_gather };
  struct Message {
    int step = 0;
    Kind kind = Kind::reduce_up;
    int chunk = 0;
    int peer = 0;        // a rank, or -1: the node's switch
    bool send = false;
    Part part = Part::chunk;
    int member = 0;      // the slice's owner (its index in the node)
    int wait = 0;        // its receiver waits for it this many steps after `step`
    int piece = 0;       // Part::piece: which 1/G of the slice
  };
  // Every message of a rank (`rank` >= 0) or of node n's switch (`rank` = -1 - n), by step,
  // kind, chunk and peer: the order in which both ends of a pair post them.
  std::vector<Message> messages_of(int rank) const;
  // What message `m` of node n's GPU or switch carries.
  Chunk span(int n, const Message& m) const;
  // Whether its receiver reduces it (a partial sum) rather than keeps it.
  static bool partial(const Message& m) {
    return !m.send && (m.kind == Kind::tree_up || m.kind == Kind::ring_reduce);
  }

private:
  int offset(int n, int j) const;  // T of node n for chunk j
  void add_ring(std::vector<Message>& out, int n, int j, int me) const;

  std::vector<std::vector<int>> nodes_;
  std::vector<int> node_of_, member_of_;
  size_t count_ = 0;
  int chunks_ = 1;
  bool tree_ = false, ring_ = false;
  int lag_ = 0;
  // per tree (0, 1): each node's parent, children, up delay, depth
  struct NodeLink {
    int parent = -1;
    std::vector<int> children;
    int up_delay = 0, depth = 0;
  };
  std::vector<NodeLink> links_[2];
  int root_delay_[2] = {0, 0};
};

}  // namespace collsim
