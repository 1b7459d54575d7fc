#pragma once
// The arithmetic of the hierarchical allreduce, shared by the algorithm, its cost formula
// and the simulation's route analysis: the locality groups, the chunk each member answers
// for inside its group, and the pieces that the groups then allreduce with each other.
#include <cstddef>
#include <vector>

#include "algorithms/chunks.hpp"
#include "algorithms/collective.hpp"
#include "algorithms/model_input.hpp"
#include "algorithms/schedule.hpp"

namespace collsim {

// Ranks that share a locality id form a group: each group's ranks in rank order, groups in
// the order of their lowest rank. locality[r] is rank r's id (any integers).
std::vector<std::vector<int>> locality_groups(const std::vector<int>& locality);

// Groups of consecutive ranks with these sizes (what the cost formula needs: the plan
// below depends on the sizes only).
std::vector<std::vector<int>> consecutive_groups(const std::vector<int>& sizes);

// Consecutive blocks of `block` ranks out of p; the last one holds the rest.
std::vector<int> block_sizes(int p, int block);

// Where every element goes. Member i of group k first answers for chunk i of
// split_evenly(count, g_k) (its group's reduce-scatter). The groups' cuts differ when their
// sizes differ, so the vector is cut at every group's chunk boundaries into pieces; each
// piece lies inside one chunk of every group, and its owners (one per group, in group
// order) allreduce it with each other. With equal groups the pieces are the chunks and
// piece i's owners are the members of local index i.
struct HierarchyPlan {
  struct Piece {
    Chunk span;
    std::vector<int> owners;  // one rank per group, in group order
  };
  std::vector<std::vector<int>> groups;
  std::vector<std::vector<Chunk>> group_chunks;  // [group][local index]
  std::vector<Piece> pieces;                     // non-empty, in vector order

  // The group of `rank` and its index inside it.
  struct Place {
    int group = 0;
    int local = 0;
  };
  Place place(int rank) const;
  bool even() const;  // every group the same size
};

HierarchyPlan plan_hierarchy(std::vector<std::vector<int>> groups, size_t count);

// The levels other than the ring (algorithms/hierarchy_levels.cpp). Inside: this rank's
// group reduce-scatters by recursive halving (gather: allgathers by recursive doubling),
// member i answering for chunk i of the group's cut. Across: the owners of each piece this
// rank owns allreduce it by halving and doubling, or by a binomial tree.
void hierarchical_inside(Comm& comm, Buffer& buf, const ReduceOp* op, const HierarchyPlan& plan, bool gather);
void hierarchical_across(Comm& comm, Buffer& buf, const ReduceOp& op, const HierarchyPlan& plan, HierarchyLevel inter);
// Their schedules, every group's and every piece's (rank by rank: disjoint ranks go on at once).
void hierarchical_inside_steps(Schedule& schedule, const ModelInput& in, const HierarchyPlan& plan, bool gather);
void hierarchical_across_steps(Schedule& schedule, const ModelInput& in, const HierarchyPlan& plan, HierarchyLevel inter);

// The NVLS level inside the groups (algorithms/hierarchy_nvls.cpp; the groups are the nodes,
// switch actor k of 2G the reductions of group k, G + k its multicasts): a GPU's part of the
// reduce-scatter (gather false) or allgather, the NVSwitch actors' part of both, and their steps.
void hierarchical_nvls_inside(Comm& comm, Buffer& buf, const HierarchyPlan& plan, bool gather);
void hierarchical_nvls_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args);
void hierarchical_nvls_steps(Schedule& schedule, const ModelInput& in, const HierarchyPlan& plan, bool gather);

// With the ring between nodes of equal size, the NVLS level and the ring run pipelined instead,
// chunk by chunk through NCCL's FIFO (nvls_plan.hpp, NvlsAcross::ring): these run a GPU's side,
// a switch actor's and the schedule; the chunk is collective.segment, made larger where the
// messages would pass max_pipelined_messages or max_followed_messages (the model's).
bool nvls_ring_pipelined(const HierarchyPlan& plan, HierarchyLevel inter);
size_t nvls_ring_chunk(size_t count, size_t segment_elems, int p, int groups);
void hierarchical_nvls_ring(Comm& comm, Buffer& buf, const CollectiveArgs& args, int groups);
Schedule hierarchical_nvls_ring_schedule(const ModelInput& in, int groups);

}  // namespace collsim
