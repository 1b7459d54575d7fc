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
// T is 2 on one node; with the tree, 2 + the root's up delay + H x the node's depth, a hop
// across nodes taking H = 1 + `lag` steps: its receiver waits for the slice `lag` steps after
// the step that carries it (as late as NCCL's FIFO lets its sender run ahead: fifo - 1), so that
// a network hop's latency overlaps the next chunks' steps instead of stalling each of them.
// Every GPU sends and receives (1 + 1/g) times the vector through its NVLink port (g per node).
#include <cstddef>
#include <vector>

#include "algorithms/chunks.hpp"

namespace collsim {

class NvlsPlan {
public:
  // `locality[r]`: rank r's node (equal sizes with the tree); `tree`: NVLSTree across nodes.
  NvlsPlan(const std::vector<int>& locality, size_t count, size_t chunk_elems, bool tree, int lag = 0);

  int nodes() const { return static_cast<int>(nodes_.size()); }
  int chunks() const { return chunks_; }
  const std::vector<int>& node(int n) const { return nodes_[static_cast<size_t>(n)]; }
  int node_of(int rank) const { return node_of_[static_cast<size_t>(rank)]; }
  Chunk chunk(int j) const;
  Chunk slice(int n, int j, int member) const;  // slice `member` of chunk j in node n

  // What a message carries: the whole chunk, or one slice.
  enum class Part { chunk, slice };
  // Why: the NVSwitch's reduction (up to it, then its result down), the tree across nodes
  // (up, partial sums the receiver reduces; down), the multicast (up to it, then down).
  enum class Kind { reduce_up, reduce_down, tree_up, tree_down, multicast_up, multicast_down };
  struct Message {
    int step = 0;
    Kind kind = Kind::reduce_up;
    int chunk = 0;
    int peer = 0;        // a rank, or -1: the node's switch
    bool send = false;
    Part part = Part::chunk;
    int member = 0;      // the slice's owner (its index in the node)
    int wait = 0;        // its receiver waits for it this many steps after `step`
  };
  // Every message of a rank (`rank` >= 0) or of node n's switch (`rank` = -1 - n), by step,
  // kind, chunk and peer: the order in which both ends of a pair post them.
  std::vector<Message> messages_of(int rank) const;

private:
  int offset(int n, int j) const;  // T of node n for chunk j

  std::vector<std::vector<int>> nodes_;
  std::vector<int> node_of_, member_of_;
  size_t count_ = 0;
  int chunks_ = 1;
  bool tree_ = false;
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
