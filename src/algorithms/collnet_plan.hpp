#pragma once
// NCCL's CollNet allreduces (src/device/all_reduce.h, runCollNetDirect / runCollNetChain), as
// `nccl-collnet-direct` and `nccl-collnet-chain` run them and their schedules price them: one
// plan of every message of every GPU and of every rail's SHARP switch, at its step. The
// InfiniBand switches reduce in the network (SHARP): switch i serves GPU i of every node (the
// GPUs on rail i), and its reduction over the nodes happens in the switch actor on real data.
//
// CollNetDirect: the vector is cut into chunks, each chunk into one slice per GPU of a node
// (every GPU is a head: it has its own NIC). For chunk j:
//   step j          every GPU sends slice i to GPU i of its node (the scatter to the heads);
//   step j+1        GPU i sends slice i, reduced over its node, to its rail's switch;
//   step j+2        the switch sends slice i, reduced over every node, back to every GPU i;
//   step j+3+lag    GPU i sends it to every GPU of its node (the gather).
// CollNetChain: the vector is cut into lanes (NCCL's channels), each into chunks; lane l runs a
// chain through the GPUs of each node ending at its head, GPU l % g, which talks to its rail's
// switch. For chunk j of a lane, with the chain's positions k = 0 .. g-1 (the head g-1):
//   step j+k        position k sends the chunk, reduced with what it received, to k+1;
//   step j+g-1      the head sends it to the switch; step j+g: the switch sends it back;
//   from j+g+1+lag  each position passes the result down the chain, one step per hop.
// A hop through the switch takes 1 + `lag` steps: the GPU waits for the switch's answer `lag`
// steps after the step that carries it (NCCL's FIFO lets the GPU run that far ahead), so that
// the network's latency overlaps the next chunks instead of stalling each of them.
#include <cstddef>
#include <vector>

#include "algorithms/chunks.hpp"

namespace collsim {

class CollNetPlan {
public:
  // `locality[r]`: rank r's node (nodes of equal size); `chain`: CollNetChain on `lanes` lanes.
  CollNetPlan(const std::vector<int>& locality, size_t count, size_t chunk_elems, bool chain, int lanes, int lag);

  int chunks() const { return chunks_; }
  int member_of(int rank) const { return member_of_[static_cast<size_t>(rank)]; }

  enum class Kind { scatter, to_switch, from_switch, gather, chain_up, chain_down };
  struct Message {
    int step = 0;
    Kind kind = Kind::scatter;
    int lane = 0;
    int chunk = 0;
    int peer = 0;       // a rank, or -1: the rank's rail switch
    bool send = false;
    Chunk range;        // the elements it carries
    bool reduce = false;  // its receiver adds it into its own (a partial sum)
    int wait = 0;       // its receiver waits for it this many steps after `step`
  };
  // Every message of a rank, by step, kind, lane, chunk and peer: the order in which both ends
  // of a pair post them.
  std::vector<Message> messages_of(int rank) const;
  // Every message of the switch serving `members` (GPU i of every node), peers those ranks.
  std::vector<Message> messages_of_switch(const std::vector<int>& members) const;

private:
  void direct(int rank, std::vector<Message>& out) const;
  void chain(int rank, std::vector<Message>& out) const;
  Chunk chunk(int lane, int j) const;
  Chunk slice(int j, int member) const;  // CollNetDirect: slice `member` of chunk j

  std::vector<std::vector<int>> nodes_;
  std::vector<int> node_of_, member_of_;
  size_t count_ = 0;
  int chunks_ = 1, lanes_ = 1, lag_ = 0;
  bool chain_ = false;
};

}  // namespace collsim
