#include "algorithms/registry.hpp"

#include <fmt/format.h>

#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"
#include "util/errors.hpp"
#include "util/named_enum.hpp"
#include "util/suggest.hpp"

namespace collsim {

namespace {
const NamedEnum<Collective>& collectives() {
  static const NamedEnum<Collective> table{"collective",
                                           {{Collective::allreduce, "allreduce"},
                                            {Collective::broadcast, "broadcast"},
                                            {Collective::reduce, "reduce"},
                                            {Collective::reduce_scatter, "reduce-scatter"},
                                            {Collective::allgather, "allgather"},
                                            {Collective::alltoall, "alltoall"}}};
  return table;
}
}  // namespace

std::string_view collective_name(Collective collective) { return collectives().name(collective); }
std::vector<std::string> collective_names() { return collectives().names(); }
Collective parse_collective(std::string_view name, std::string_view field) { return collectives().parse(name, field); }

std::string default_algorithm(Collective collective) {
  switch (collective) {
    case Collective::allreduce:
    case Collective::reduce_scatter:
    case Collective::allgather: return "ring";
    case Collective::broadcast:
    case Collective::reduce: return "binomial";
    case Collective::alltoall: return "pairwise";
  }
  return "ring";
}

std::optional<Chunk> reduced_part(Collective collective, size_t count, int rank, int size, int root) {
  switch (collective) {
    case Collective::allreduce: return Chunk{0, count};
    case Collective::reduce: return rank == root ? std::optional<Chunk>(Chunk{0, count}) : std::nullopt;
    case Collective::reduce_scatter: return split_evenly(count, size)[static_cast<size_t>(rank)];
    case Collective::broadcast:
    case Collective::allgather:
    case Collective::alltoall: return std::nullopt;
  }
  return std::nullopt;
}

namespace {

// collsim's allreduces.
std::vector<AlgorithmInfo> allreduces() {
  return {
      {Collective::allreduce, "naive", "flat reduce to the root, then flat broadcast: 2(alpha + (p-1) n/B)",
       allreduce_naive, schedule_allreduce_naive, root_partners, {.root = true}},
      {Collective::allreduce, "naive-binomial",
       "binomial-tree reduce, then binomial-tree broadcast: 2 ceil(log2 p)(alpha + n/B)", allreduce_naive_binomial,
       schedule_allreduce_naive_binomial, binomial_partners, {.root = true}},
      {Collective::allreduce, "ring",
       "ring reduce-scatter then ring allgather (Patarasuk & Yuan 2009): 2(p-1)(alpha + n/(pB))", allreduce_ring,
       schedule_allreduce_ring, ring_partners, {.channels = true}},
      {Collective::allreduce, "recursive-doubling",
       "whole vectors swapped at distance 1, 2, 4, ...: log2 p (alpha + n/B), 2 steps more if p is not a power of 2",
       allreduce_recursive_doubling, schedule_allreduce_recursive_doubling, butterfly_partners},
      {Collective::allreduce, "rabenseifner",
       "recursive-halving reduce-scatter, recursive-doubling allgather: 2 log2 p alpha + 2(p-1)/p n/B (p a power of 2)",
       allreduce_rabenseifner, schedule_allreduce_rabenseifner, butterfly_partners},
      {Collective::allreduce, "binary-tree",
       "pipelined reduce then broadcast on a binary tree, k segments: 2(2k-2+W)(alpha + n/(kB)), W weighted depth",
       allreduce_binary_tree, schedule_allreduce_binary_tree, binary_tree_partners,
       {.root = true, .segment = true}},
      {Collective::allreduce, "double-binary-tree",
       "NCCL's two complementary trees, half the vector each in k segments: 2(2k+2 log2 p-3)(alpha + n/(2kB)) (p a "
       "power of 2)",
       allreduce_double_binary_tree, schedule_allreduce_double_binary_tree, double_tree_partners,
       {.segment = true}},
      {Collective::allreduce, "direct",
       "every rank sends its vector to all others at once, reduces in rank order: alpha + (p-1) n/B", allreduce_direct,
       schedule_allreduce_direct, all_partners},
      {Collective::allreduce, "hierarchical",
       "ring reduce-scatter in each group (zone or group_size), ring allreduce across groups, ring allgather: "
       "2(g-1)(alpha + n/(gB)) + 2(G-1)(alpha' + n/(gGB'))",
       allreduce_hierarchical, schedule_allreduce_hierarchical,
       ring_and_root_partners, {.groups = true, .channels = true, .levels = true}},
      {Collective::allreduce, "parameter-server",
       "S servers (ranks 0..S-1, or processes of their own: collective.parameter_server) reduce a shard each: "
       "every rank pushes shard s to server s, then pulls it back: 2(alpha + (p-1) n/(SB))",
       allreduce_parameter_server, schedule_allreduce_parameter_server, server_partners,
       {.servers = true}, true, parameter_server_process, SwitchKind::server},
  };
}

// NCCL's allreduces (allreduce_nccl_*.cpp): they run with NCCL's transport (src/nccl/).
std::vector<AlgorithmInfo> nccl_allreduces() {
  return {
      {Collective::allreduce, "nccl-ring",
       "NCCL's Ring: k rail-aligned channel rings, pipelined (a rank forwards as soon as it receives), NCCL's "
       "protocol costs: 2(p-1) hops of n/(kp) per ring",
       allreduce_nccl_ring, schedule_allreduce_nccl_ring, ring_partners, {.nccl = true}},
      {Collective::allreduce, "nccl-tree",
       "NCCL's Tree: a chain in each node, NCCL's double binary tree across nodes, lanes on every NIC, chunks "
       "reduced up and sent back down",
       allreduce_nccl_tree, schedule_allreduce_nccl_tree, ring_partners, {.nccl = true}},
      {Collective::allreduce, "nccl-nvls",
       "NCCL's NVLS: each node's NVSwitch reduces (NVLink SHARP) and multicasts; (1 + 1/g) n through each NVLink port",
       allreduce_nccl_nvls, schedule_allreduce_nccl_nvls, ring_partners, {.nccl = true}, true, nccl_nvls_switch,
       SwitchKind::nvlink},
      {Collective::allreduce, "nccl-nvls-tree",
       "NCCL's NVLSTree: NVLS in each node, GPU i of every node on a double binary tree over the nodes for slice i",
       allreduce_nccl_nvls_tree, schedule_allreduce_nccl_nvls_tree, ring_partners, {.nccl = true}, true,
       nccl_nvls_tree_switch, SwitchKind::nvlink},
      {Collective::allreduce, "nccl-collnet-direct",
       "NCCL's CollNetDirect: each node's GPUs scatter to their heads, each rail's InfiniBand switch reduces over the "
       "nodes (SHARP), the heads gather back",
       allreduce_nccl_collnet_direct, schedule_allreduce_nccl_collnet_direct, ring_partners, {.nccl = true}, true,
       nccl_collnet_direct_switch, SwitchKind::network},
      {Collective::allreduce, "nccl-collnet-chain",
       "NCCL's CollNetChain: a chain in each node up to its head, each rail's InfiniBand switch reduces over the "
       "nodes (SHARP), the result back down the chain",
       allreduce_nccl_collnet_chain, schedule_allreduce_nccl_collnet_chain, ring_partners, {.nccl = true}, true,
       nccl_collnet_chain_switch, SwitchKind::network},
  };
}

// The other collectives' algorithms.
std::vector<AlgorithmInfo> others() {
  return {
      {Collective::allreduce, "student", "yours (lab 7): src/algorithms/student.cpp, or -DCOLLSIM_STUDENT_FILE",
       allreduce_student, schedule_allreduce_student, all_partners, {}, false},
      {Collective::broadcast, "student", "yours (lab 7): src/algorithms/student.cpp, or -DCOLLSIM_STUDENT_FILE",
       broadcast_student, schedule_broadcast_student, all_partners, {.root = true}, false},
      {Collective::broadcast, "binomial", "binomial tree, whole message per round: ceil(log2 p)(alpha + n/B)",
       broadcast_binomial, schedule_broadcast_binomial, binomial_partners, {.root = true}},
      {Collective::broadcast, "flat", "root sends to every rank at once: alpha + (p-1) n/B", broadcast_flat,
       schedule_broadcast_flat, root_partners, {.root = true}},
      {Collective::broadcast, "pipeline",
       "chain from the root, message cut into segments: (p+k-2)(alpha + n/(kB)) for k segments",
       broadcast_pipeline, schedule_broadcast_pipeline, chain_partners,
       {.root = true, .segment = true}},
      {Collective::broadcast, "scatter-allgather",
       "binomial scatter of p chunks then ring allgather (van de Geijn): (log2 p + p-1) alpha + 2(p-1)/p n/B (p a "
       "power of 2)",
       broadcast_scatter_allgather, schedule_broadcast_scatter_allgather, scatter_ring_partners,
       {.root = true}},
      {Collective::reduce, "binomial", "binomial tree towards the root: ceil(log2 p)(alpha + n/B)", reduce_binomial,
       schedule_reduce_binomial, binomial_partners, {.root = true}},
      {Collective::reduce, "flat", "every rank sends to the root at once: alpha + (p-1) n/B", reduce_flat,
       schedule_reduce_flat, root_partners, {.root = true}},
      {Collective::reduce_scatter, "ring", "ring, rank r ends with chunk r: (p-1)(alpha + n/(pB))",
       reduce_scatter_ring, schedule_reduce_scatter_ring, ring_partners, {.channels = true}},
      {Collective::reduce_scatter, "recursive-halving",
       "halves swapped at distance p/2, p/4, ...: log2 p alpha + (p-1)/p n/B (p a power of 2)",
       reduce_scatter_recursive_halving, schedule_reduce_scatter_recursive_halving, butterfly_partners},
      {Collective::allgather, "ring", "ring, rank r starts with chunk r: (p-1)(alpha + n/(pB))", allgather_ring,
       schedule_allgather_ring, ring_partners, {.channels = true}},
      {Collective::allgather, "recursive-doubling",
       "everything held swapped at distance 1, 2, 4, ...: log2 p alpha + (p-1)/p n/B (p a power of 2)",
       allgather_recursive_doubling, schedule_allgather_recursive_doubling, butterfly_partners},
       {Collective::alltoall, "pairwise", "p-1 steps, step s swaps with ranks r+s and r-s: (p-1)(alpha + n/(pB))",
        alltoall_pairwise, schedule_alltoall_pairwise, all_partners},
       {Collective::alltoall, "direct", "every block sent at once: alpha + (p-1) n/(pB)", alltoall_direct,
        schedule_alltoall_direct, all_partners},
       {Collective::alltoall, "nccl-alltoall",
        "NCCL's alltoall: a send and a receive per peer in NCCL's p2p order, each block in parts on its p2p "
        "channels, PXN across nodes, NCCL's transport",
        alltoall_nccl, schedule_alltoall_nccl, all_partners, {.nccl = true}},
  };
}

}  // namespace

const std::vector<AlgorithmInfo>& all_algorithms() {
  static const std::vector<AlgorithmInfo> algorithms = [] {
    std::vector<AlgorithmInfo> list = allreduces();
    for (auto* part : {nccl_allreduces, others})
      for (AlgorithmInfo& algorithm : part()) list.push_back(std::move(algorithm));
    return list;
  }();
  return algorithms;
}

std::string uses_names(const Uses& uses) {
  std::string names;
  for (const auto& [used, name] : {std::pair{uses.root, "root"}, {uses.segment, "segment"}, {uses.servers, "servers"},
                                   {uses.groups, "groups"}, {uses.channels, "channels"}, {uses.nccl, "nccl"},
                                   {uses.levels, "levels"}})
    if (used) names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

std::vector<std::string> algorithm_names(Collective collective) {
  std::vector<std::string> names;
  for (const auto& a : all_algorithms())
    if (a.collective == collective) names.push_back(a.name);
  return names;
}

namespace {
std::vector<std::string> names_where(Collective collective, bool nccl) {
  std::vector<std::string> names;
  for (const auto& a : all_algorithms())
    if (a.collective == collective && a.uses.nccl == nccl) names.push_back(a.name);
  return names;
}
}  // namespace

std::vector<std::string> nccl_algorithm_names(Collective collective) { return names_where(collective, true); }
std::vector<std::string> classic_algorithm_names(Collective collective) { return names_where(collective, false); }

const AlgorithmInfo& find_algorithm(Collective collective, const std::string& name, std::string_view field) {
  for (const auto& a : all_algorithms())
    if (a.collective == collective && a.name == name) return a;
  const auto names = algorithm_names(collective);
  throw InputError(fmt::format("{}: unknown {} algorithm '{}'{}; allowed: {}", field, collective_name(collective),
                               name, did_you_mean(name, names), join(names)));
}

std::optional<std::pair<std::string, std::string>> allreduce_halves(const std::string& allreduce) {
  if (allreduce == "ring") return std::pair<std::string, std::string>{"ring", "ring"};
  if (allreduce == "rabenseifner") return std::pair<std::string, std::string>{"recursive-halving", "recursive-doubling"};
  return std::nullopt;
}

}  // namespace collsim
