#pragma once
// What every algorithm receives besides its Comm and Buffer, and the collectives it serves.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/chunks.hpp"
#include "algorithms/server_deployment.hpp"
#include "comm/comm.hpp"
#include "comm/reduce_op.hpp"
#include "util/named_enum.hpp"

namespace collsim {

// allreduce: every rank ends with the reduction of all vectors. broadcast: every rank ends
// with the root's vector. reduce: the root ends with the reduction. reduce-scatter: rank r
// ends with chunk r of split_evenly(n, p), reduced (the rest of its buffer is scratch).
// allgather: rank r contributes chunk r of its vector (the rest is overwritten) and every
// rank ends with every rank's chunk. alltoall: rank r's block j (alltoall_block) goes to
// rank j, which keeps it as its block r; elements past the p blocks stay where they are.
enum class Collective { allreduce, broadcast, reduce, reduce_scatter, allgather, alltoall };

std::string_view collective_name(Collective collective);
Collective parse_collective(std::string_view name, std::string_view field);
std::vector<std::string> collective_names();
// The algorithm a scenario gets when it names none.
std::string default_algorithm(Collective collective);

// The part of a rank's buffer that holds a reduction result when the collective is done
// (what avg divides once at the end), if any: the whole vector for allreduce and at the
// root of a reduce, chunk `rank` for reduce-scatter, nothing for broadcast and allgather.
std::optional<Chunk> reduced_part(Collective collective, size_t count, int rank, int size, int root);

// The hierarchical allreduce's algorithm at one level (collective.intra, collective.inter;
// algorithms/hierarchy_levels.cpp).
// nvls: inside a node, its NVSwitch reduces (NVLink SHARP, hierarchy_nvls.cpp).
enum class HierarchyLevel { ring, halving_doubling, tree, nvls };
const NamedEnum<HierarchyLevel>& hierarchy_level_names();
// A level inside the groups (collective.intra, --intra): ring, halving-doubling or nvls; a
// tree is refused (it would leave the whole vector on one member), and an unknown name lists
// only those. `field` names the key or flag in the error.
HierarchyLevel parse_intra_level(std::string_view name, std::string_view field);
// A level between the groups (collective.inter, --inter): ring, halving-doubling or tree;
// nvls is refused (an NVSwitch reduces inside one node only).
HierarchyLevel parse_inter_level(std::string_view name, std::string_view field);

struct CollectiveArgs {
  const ReduceOp* op = nullptr;  // unused by broadcast and allgather
  int root = 0;                  // broadcast and reduce (and naive allreduce's meeting point)
  size_t segment_elems = 1;      // pipelined algorithms: elements per segment
  int servers = 1;               // parameter-server: S servers serve a shard each
  ServerDeployment deployment;   // parameter-server: where the servers run, what they cost
  int channels = 1;              // ring and hierarchical: slices on concurrent rings (channels.hpp)
  int fifo = 1;                  // NCCL's algorithms: chunks a connection's FIFO holds (NCCL_STEPS / chunk steps)
  HierarchyLevel intra = HierarchyLevel::ring;  // hierarchical: inside the groups
  HierarchyLevel inter = HierarchyLevel::ring;  // hierarchical: between them
  // NCCL's algorithms: a message's hop latency (NCCL's hwLat in its transport, seconds) inside
  // a locality group and between groups, by which nccl-tree merges each rank's two streams in
  // time order (nccl_trees.hpp); 0: none
  double hop_inside = 0;
  double hop_across = 0;
};

// The root inside a group of `size` ranks: the scenario's root, or rank 0 once a rebuilt
// group is too small to have it.
inline int root_in_group(int root, int size) { return root < size ? root : 0; }

// The servers of a parameter server inside a group of `size` ranks: the scenario's count,
// or every rank once a rebuilt group is smaller than that.
inline int servers_in_group(int servers, int size) { return servers < 1 ? 1 : (servers < size ? servers : size); }

// Alltoall's block j of a vector of `count` elements: count / p elements each (nccl-tests
// sends the same count to every peer), the remainder at the end is no block.
inline Chunk alltoall_block(size_t count, int p, int j) {
  const size_t block = count / static_cast<size_t>(p);
  return {static_cast<size_t>(j) * block, block};
}

using AlgorithmFn = void (*)(Comm& comm, Buffer& buf, const CollectiveArgs& args);

}  // namespace collsim
