#pragma once
// Every algorithm, one per file. Each works for any p >= 1, any element count (also
// fewer elements than ranks) and any root. The registry (registry.hpp) names them.
#include "algorithms/chunks.hpp"
#include "algorithms/collective.hpp"

namespace collsim {

void broadcast_binomial(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void broadcast_flat(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void broadcast_pipeline(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void broadcast_scatter_allgather(Comm& comm, Buffer& buf, const CollectiveArgs& args);

void reduce_binomial(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void reduce_flat(Comm& comm, Buffer& buf, const CollectiveArgs& args);

void allreduce_naive(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_naive_binomial(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_ring(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_recursive_doubling(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_rabenseifner(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_binary_tree(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_double_binary_tree(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_direct(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_hierarchical(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_parameter_server(Comm& comm, Buffer& buf, const CollectiveArgs& args);
// A parameter server's own process (collective.parameter_server placement shared or dedicated).
void parameter_server_process(Comm& comm, Buffer& buf, const CollectiveArgs& args);

// NCCL's algorithms (allreduce_nccl_*.cpp): they run with NCCL's transport (src/nccl/).
void allreduce_nccl_ring(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_nccl_tree(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_nccl_nvls(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_nccl_nvls_tree(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_nccl_collnet_direct(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allreduce_nccl_collnet_chain(Comm& comm, Buffer& buf, const CollectiveArgs& args);
// The switches' side of NCCL's in-network reductions (comm/switch_ops.hpp).
void nccl_nvls_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void nccl_nvls_tree_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void nccl_collnet_direct_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void nccl_collnet_chain_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args);

// The student's slot (lab 7, docs/labs/): defined in src/algorithms/student.cpp, or in the
// file the build's COLLSIM_STUDENT_FILE names, which replaces it.
void allreduce_student(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void broadcast_student(Comm& comm, Buffer& buf, const CollectiveArgs& args);

// Reduce-scatter: rank r ends with chunk r of split_evenly(n, p), reduced over all ranks.
void reduce_scatter_ring(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void reduce_scatter_recursive_halving(Comm& comm, Buffer& buf, const CollectiveArgs& args);

// Allgather: rank r starts with chunk r of split_evenly(n, p) and ends with every chunk.
void allgather_ring(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void allgather_recursive_doubling(Comm& comm, Buffer& buf, const CollectiveArgs& args);

// Alltoall: rank r's block j (alltoall_block) ends at rank j as its block r.
void alltoall_pairwise(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void alltoall_direct(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void alltoall_nccl(Comm& comm, Buffer& buf, const CollectiveArgs& args);

// Building blocks shared by several algorithms (building_blocks.cpp).

// The first step of the fold onto a power of two: an even rank below 2 rem sends its whole
// vector to the odd rank above it, which folds it into its own. Returns false for the
// even rank, which then sits out.
bool fold_vector_in(Comm& comm, Buffer& buf, const ReduceOp& op, const PowerOfTwoFold& fold);

// The last step of the fold: an odd rank below 2 rem sends `result` (its even partner's
// share of the result) to the even rank below it. Nothing for the other ranks.
void unfold_result(Comm& comm, const PowerOfTwoFold& fold, View result);

// Recursive halving among the pof2 ranks left by the fold (distance pof2/2 first): new rank
// i ends with blocks[i] reduced over all of them. `blocks` are consecutive, one per new rank.
void reduce_scatter_halving(Comm& comm, Buffer& buf, const ReduceOp& op, const PowerOfTwoFold& fold,
                            const std::vector<Chunk>& blocks, const char* phase = "reduce-scatter");

// Recursive doubling among the pof2 ranks left by the fold (distance 1 first): new rank i
// starts with blocks[i] and ends with all of them.
void allgather_doubling(Comm& comm, Buffer& buf, const PowerOfTwoFold& fold, const std::vector<Chunk>& blocks,
                        const char* phase = "allgather");

// Ring allgather over the chunks of split_evenly(buf.size(), p): this rank starts with
// chunk `mine`, its right neighbour with chunk mine + 1 (mod p); after p-1 steps every
// rank holds every chunk.
void ring_allgather(Comm& comm, Buffer& buf, int mine);

// A ring over some of the group's ranks (a locality group, or one rank of each group) and
// the part of the vector it works on, `slice`: member i answers for chunk i of
// split_slice(slice, size()), computed when needed (a list per rank would make p^2 chunks
// over a run: 1 GiB at p = 8192). A ring of every rank of the group may instead answer for
// the ranks' own chunks (reduce-scatter and allgather, whose rank r ends with or starts
// from chunk r of the slice): with `parts` > 0, member i answers for part `part` of
// `parts` of the chunk of rank members[i] (each of `parts` channels its part).
struct RingTask {
  std::vector<int> members;   // group ranks, in ring order
  int position = 0;           // this rank's index in members
  Chunk slice;
  int part = 0, parts = 0;

  int size() const { return static_cast<int>(members.size()); }
  Chunk chunk(int index) const {
    const int i = mod(index, size());
    Chunk c = parts > 0 ? part_of(even_chunk(slice.count, size(), members[static_cast<size_t>(i)])) :
                          even_chunk(slice.count, size(), i);
    c.offset += slice.offset;
    return c;
  }
  // A chunk at least as large as every other (scratch for the one in flight).
  Chunk largest() const { return parts > 0 ? part_of(even_chunk(slice.count, size(), 0)) : chunk(0); }
  int right() const { return members[static_cast<size_t>((position + 1) % size())]; }
  int left() const { return members[static_cast<size_t>((position + size() - 1) % size())]; }

private:
  Chunk part_of(const Chunk& own) const {
    Chunk c = even_chunk(own.count, parts, part);
    c.offset += own.offset;
    return c;
  }
};

// The rings of reduce-scatter and allgather on k channels: channel c's ring (channel_ring,
// as the allreduce's, turned by c inside each locality group) carries part c of every
// rank's own chunk of `count` elements. One channel: the group in rank order.
std::vector<RingTask> own_chunk_rings(Comm& comm, size_t count, int channels);

// NCCL's channels (channels.hpp): k rings, ring c over channel c's order of the ranks (every
// locality group turned by c) carrying slice c of a vector of `count` elements, this rank's
// position in each found.
std::vector<RingTask> channel_ring_tasks(const Comm& comm, size_t count, int channels);

// Ring reduce-scatter on every ring of `rings` at once, in lock step (one message per ring
// each way per step): after size-1 steps member i holds chunks[i] reduced over its ring.
// Messages are labelled `phase` (a string literal) and the step.
void rings_reduce_scatter(Comm& comm, Buffer& buf, const ReduceOp& op, const std::vector<RingTask>& rings,
                          const char* phase);

// Ring allgather on every ring at once: member i starts with chunks[i]; after size-1 steps
// every member holds every chunk of its ring.
void rings_allgather(Comm& comm, Buffer& buf, const std::vector<RingTask>& rings, const char* phase);

// One phase of a pipelined tree schedule: tree t carries segments[t]. Broadcast: the
// root's segments go down; reduce: every rank folds its children's partial results (with
// `op`) into its own and passes them up.
enum class TreePhase { reduce, broadcast };
void run_tree_phase(Comm& comm, Buffer& buf, const ReduceOp* op, const TreeSchedule& schedule,
                    const std::vector<std::vector<Chunk>>& segments, TreePhase phase);

}  // namespace collsim
