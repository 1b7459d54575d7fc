#include "algorithms/message_counts.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "algorithms/channels.hpp"
#include "algorithms/hierarchy.hpp"

namespace collsim {
namespace {

// Segments of a pipelined vector: at least one (split_into_segments).
double segments(size_t count, size_t segment) {
  const size_t per = std::max<size_t>(1, segment);
  return static_cast<double>(std::max<size_t>(1, (count + per - 1) / per));
}

// The butterfly algorithms fold the first 2 rem ranks in pairs (one message each way per
// pair: in, and the result back out) and run log2 pof2 steps of one message per rank.
double butterfly(int p, int phases) {
  const PowerOfTwoFold fold = fold_to_power_of_two(p);
  const double pof2 = fold.pof2;
  return 2.0 * fold.rem + phases * pof2 * std::countr_zero(static_cast<unsigned>(fold.pof2));
}

// Ring reduce-scatter and allgather inside each group (with NVLS: each member's vector to its
// NVSwitch, its chunk back; its chunk to the switch, the vector back), then both again among
// each piece's owners (one per group), on every channel's slice (hierarchy.hpp).
double hierarchical(const CollectiveShape& s) {
  const double p = s.p;
  // with NVLS and the ring between nodes the level is pipelined: at most max_followed_messages
  // (hierarchy.hpp, nvls_ring_chunk), or one chunk's
  if (s.group_size <= 0)
    return s.nvls_inside ? std::max(static_cast<double>(max_followed_messages), 2 * p * (p + 1)) : 2 * p * (p - 1) * s.channels;
  const auto groups = consecutive_groups(block_sizes(s.p, s.group_size));
  double messages = 0;
  for (const Chunk& slice : channel_slices(s.elems, s.channels)) {
    const HierarchyPlan plan = plan_hierarchy(groups, slice.count);
    const double g_count = static_cast<double>(plan.groups.size());
    for (const auto& group : plan.groups) {
      const double g = static_cast<double>(group.size());
      messages += s.nvls_inside ? 4 * g : 2 * g * (g - 1);
    }
    messages += static_cast<double>(plan.pieces.size()) * 2 * g_count * (g_count - 1);
  }
  return messages;
}

double allreduce_messages(const std::string& name, const CollectiveShape& s) {
  const double p = s.p;
  if (name == "naive" || name == "naive-binomial") return 2 * (p - 1);
  if (name == "ring" || name == "nccl-ring") return s.p < 2 ? 0 : 2 * p * (p - 1) * s.channels;
  // one chunk per lane each way on every tree edge and its bodies, more within the budget
  if (name == "nccl-tree") return std::max(max_pipelined_messages, 4 * (p - 1) * s.channels);
  // NVLS: 4 messages per GPU and chunk with its NVSwitch; NVLSTree: its tree's besides
  if (name == "nccl-nvls") return std::max(max_pipelined_messages, 4 * p);
  if (name == "nccl-nvls-tree") return std::max(max_pipelined_messages, 4 * p + 2 * (p - 1));
  // the chunks NCCL's tuner sizes, within the budget (nccl_chunk_elements: the switches' messages included)
  if (name == "nccl-collnet-direct" || name == "nccl-collnet-chain") return max_pipelined_messages;
  if (name == "recursive-doubling") return butterfly(s.p, 1);
  if (name == "rabenseifner") return butterfly(s.p, 2);
  // every tree edge carries each segment up, then down
  if (name == "binary-tree") return 2 * (p - 1) * segments(s.elems, s.segment_elems);
  if (name == "double-binary-tree") {
    const size_t first_half = (s.elems + 1) / 2;
    return 2 * (p - 1) * (segments(first_half, s.segment_elems) + segments(s.elems - first_half, s.segment_elems));
  }
  if (name == "direct") return p * (p - 1);
  if (name == "hierarchical") return hierarchical(s);
  if (name == "parameter-server")
    return s.server_processes ? 2.0 * s.servers * p : 2 * servers_in_group(s.servers, s.p) * (p - 1);
  throw std::logic_error("collective_messages: no count for allreduce " + name);
}

double messages_by_name(Collective collective, const std::string& name, const CollectiveShape& s) {
  const double p = s.p;
  switch (collective) {
    case Collective::allreduce: return allreduce_messages(name, s);
    case Collective::broadcast:
      if (name == "binomial" || name == "flat") return p - 1;
      if (name == "pipeline") return (p - 1) * segments(s.elems, s.segment_elems);
      if (name == "scatter-allgather") return (p - 1) + p * (p - 1);
      break;
    case Collective::reduce:
      if (name == "binomial" || name == "flat") return p - 1;
      break;
    case Collective::reduce_scatter:
      if (name == "ring") return p * (p - 1) * s.channels;
      if (name == "recursive-halving") return butterfly(s.p, 1);
      break;
    case Collective::allgather:
      if (name == "ring") return p * (p - 1) * s.channels;
      if (name == "recursive-doubling") return butterfly(s.p, 1);
      break;
    case Collective::alltoall:
      if (name == "pairwise" || name == "direct") return p * (p - 1);
      // at most one message per p2p channel of a peer (nccl/p2p.hpp: a power of two, at least
      // the communicator's channels, which s.channels holds)
      if (name == "nccl-alltoall") return p * (p - 1) * std::bit_ceil(static_cast<unsigned>(std::max(1, s.channels)));
      break;
  }
  throw std::logic_error("collective_messages: no count for " + std::string(collective_name(collective)) + " " + name);
}

}  // namespace

// The student's slot (lab 7) has no count of its own: the messages its schedule sends.
double scheduled_messages(const AlgorithmInfo& algorithm, const CollectiveShape& shape) {
  ModelInput in;
  in.p = shape.p;
  in.elems = shape.elems;
  in.segment_elems = shape.segment_elems;
  in.channels = shape.channels;
  in.servers = shape.servers;
  const Schedule schedule = algorithm.schedule(in);  // kept: steps() refers into it
  double messages = 0;
  for (const Step& step : schedule.steps()) messages += static_cast<double>(step.flows.size()) * step.repeat;
  return messages;
}

double collective_messages(const AlgorithmInfo& algorithm, const CollectiveShape& shape) {
  if (!algorithm.builtin) return scheduled_messages(algorithm, shape);
  return messages_by_name(algorithm.collective, algorithm.name, shape);
}

double collective_messages_at_once(const AlgorithmInfo& algorithm, const CollectiveShape& shape) {
  const double p = shape.p;
  const bool direct = algorithm.name == "direct" &&
                      (algorithm.collective == Collective::allreduce || algorithm.collective == Collective::alltoall);
  // NCCL's tree posts every receive of every chunk at once (nccl_trees.hpp: each rank's lanes
  // in one sequence of rounds), and each posted receive is a transfer SimGrid holds: all its
  // messages, the budget's or one chunk per lane each way and its bodies
  if (direct || algorithm.name == "nccl-alltoall" || algorithm.name == "nccl-tree")
    return collective_messages(algorithm, shape);
  if (algorithm.uses.servers && shape.server_processes) return static_cast<double>(shape.servers) * p;
  return 0;
}

double collective_scratch_elements(const AlgorithmInfo& algorithm, const CollectiveShape& shape) {
  const double p = shape.p, n = static_cast<double>(shape.elems);
  const bool from_everyone = algorithm.collective == Collective::allreduce && algorithm.name == "direct";
  const bool root_from_everyone = (algorithm.collective == Collective::reduce && algorithm.name == "flat") ||
                                  (algorithm.collective == Collective::allreduce && algorithm.name == "naive");
  if (from_everyone) return p * (p - 1) * n;
  if (root_from_everyone) return (p - 1) * n + p * n;
  // collective.intra nvls: the NVSwitches hold every member's vector and the multicast one
  // per node besides the ranks' scratch: at most 3 p n
  if (algorithm.name == "hierarchical" && shape.nvls_inside) return 3 * p * n;
  return p * n;
}

double vectors_held_per_rank(const AlgorithmInfo& algorithm, int p) {
  CollectiveShape shape;
  shape.p = p;
  shape.elems = 1;
  return collective_scratch_elements(algorithm, shape) / p;
}

}  // namespace collsim
