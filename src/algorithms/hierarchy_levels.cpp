// The hierarchical allreduce with other algorithms than the ring at its two levels
// (collective.intra, collective.inter; hierarchy.hpp):
// - inside each group, the reduce-scatter and the allgather by recursive halving and
//   doubling among the group's members (a power of two of them): member i still ends the
//   reduce-scatter with chunk i of its group's cut, as the ring leaves it;
// - between the groups, each piece's owners (one per group) allreduce it by recursive
//   halving then doubling (Rabenseifner, a power of two of groups), or by a binomial tree:
//   reduce to the first group's owner, then broadcast back (2 log2(G) whole-piece steps).
// A rank that owns several pieces (groups of different sizes) allreduces them one after the
// other. The ring at both levels is allreduce_hierarchical's own path.
#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

#include "algorithms/algorithms.hpp"
#include "algorithms/hierarchy.hpp"
#include "algorithms/schedules.hpp"
#include "util/errors.hpp"

namespace collsim {
namespace {

int position_in(const std::vector<int>& members, int rank) {
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i] == rank) return static_cast<int>(i);
  throw std::logic_error("hierarchical: a rank outside the members it works with");
}

// `span` cut into one block per member, in the vector's coordinates.
std::vector<Chunk> blocks_of(Chunk span, size_t members) {
  std::vector<Chunk> blocks = split_evenly(span.count, static_cast<int>(members));
  for (Chunk& block : blocks) block.offset += span.offset;
  return blocks;
}

// Binomial tree over `members`: the sum of `span` to members[0], then back to all of them.
void tree_allreduce(Comm& comm, Buffer& buf, const ReduceOp& op, const std::vector<int>& members, Chunk span) {
  const int n = static_cast<int>(members.size());
  const int me = position_in(members, comm.rank());
  View mine = buf.view(span.offset, span.count);
  Buffer incoming = buf.scratch(span.count);
  int step = 0;
  for (int mask = 1; mask < n; mask *= 2, ++step) {
    comm.label("inter-reduce", step);
    if (me & mask) {  // my subtree is summed: hand it to the parent
      comm.send(members[static_cast<size_t>(me - mask)], mine);
      break;
    }
    if (me + mask < n) {
      comm.recv(members[static_cast<size_t>(me + mask)], incoming.all());
      op.combine(mine, incoming.all());
    }
  }
  int top = 1;
  while (top < n) top *= 2;
  step = 0;
  for (int mask = top / 2; mask > 0; mask /= 2, ++step) {
    comm.label("inter-broadcast", step);
    if (me % (2 * mask) == mask) comm.recv(members[static_cast<size_t>(me - mask)], mine);
    else if (me % (2 * mask) == 0 && me + mask < n) comm.send(members[static_cast<size_t>(me + mask)], mine);
  }
}

void tree_steps(Schedule& schedule, const ModelInput& in, const std::vector<int>& members, Chunk span) {
  const int n = static_cast<int>(members.size());
  const double bytes = in.bytes(span.count);
  for (int mask = 1; mask < n; mask *= 2) {
    Step& step = schedule.step();
    step.reduced = true;
    for (int i = mask; i < n; i += 2 * mask) step.send(members[static_cast<size_t>(i)], members[static_cast<size_t>(i - mask)], bytes);
  }
  int top = 1;
  while (top < n) top *= 2;
  for (int mask = top / 2; mask > 0; mask /= 2) {
    Step& step = schedule.step();
    for (int i = 0; i + mask < n; i += 2 * mask) step.send(members[static_cast<size_t>(i)], members[static_cast<size_t>(i + mask)], bytes);
  }
}

}  // namespace

const NamedEnum<HierarchyLevel>& hierarchy_level_names() {
  static const NamedEnum<HierarchyLevel> table{
      "algorithm",
      {{HierarchyLevel::ring, "ring"},
       {HierarchyLevel::halving_doubling, "halving-doubling"},
       {HierarchyLevel::tree, "tree"},
       {HierarchyLevel::nvls, "nvls"}}};
  return table;
}

HierarchyLevel parse_intra_level(std::string_view name, std::string_view field) {
  static const NamedEnum<HierarchyLevel> inside{
      "algorithm",
      {{HierarchyLevel::ring, "ring"}, {HierarchyLevel::halving_doubling, "halving-doubling"}, {HierarchyLevel::nvls, "nvls"}}};
  if (name == hierarchy_level_names().name(HierarchyLevel::tree))
    throw InputError(fmt::format("{}: a tree inside the groups would leave the whole vector on one member; allowed: ring, "
                                 "halving-doubling, nvls",
                                 field));
  return inside.parse(name, field);
}

HierarchyLevel parse_inter_level(std::string_view name, std::string_view field) {
  static const NamedEnum<HierarchyLevel> across{
      "algorithm", {{HierarchyLevel::ring, "ring"}, {HierarchyLevel::halving_doubling, "halving-doubling"}, {HierarchyLevel::tree, "tree"}}};
  if (name == hierarchy_level_names().name(HierarchyLevel::nvls))
    throw InputError(fmt::format("{}: nvls reduces in one node's NVSwitch, inside the groups only (collective.intra); "
                                 "allowed: ring, halving-doubling, tree",
                                 field));
  return across.parse(name, field);
}

void hierarchical_inside(Comm& comm, Buffer& buf, const ReduceOp* op, const HierarchyPlan& plan, bool gather) {
  const auto [group, local] = plan.place(comm.rank());
  const auto& members = plan.groups[static_cast<size_t>(group)];
  const PowerOfTwoFold fold = fold_members(members);
  if (gather) allgather_doubling(comm, buf, fold, plan.group_chunks[static_cast<size_t>(group)], "allgather");
  else reduce_scatter_halving(comm, buf, *op, fold, plan.group_chunks[static_cast<size_t>(group)], "reduce-scatter");
}

void hierarchical_across(Comm& comm, Buffer& buf, const ReduceOp& op, const HierarchyPlan& plan, HierarchyLevel inter) {
  for (const HierarchyPlan::Piece& piece : plan.pieces) {
    if (std::find(piece.owners.begin(), piece.owners.end(), comm.rank()) == piece.owners.end()) continue;
    if (inter == HierarchyLevel::tree) {
      tree_allreduce(comm, buf, op, piece.owners, piece.span);
      continue;
    }
    const PowerOfTwoFold fold = fold_members(piece.owners);
    const auto blocks = blocks_of(piece.span, piece.owners.size());
    reduce_scatter_halving(comm, buf, op, fold, blocks, "inter-reduce-scatter");
    allgather_doubling(comm, buf, fold, blocks, "inter-allgather");
  }
}

void hierarchical_inside_steps(Schedule& schedule, const ModelInput& in, const HierarchyPlan& plan, bool gather) {
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    const PowerOfTwoFold fold = fold_members(plan.groups[k]);
    if (gather) doubling_steps(schedule, in, fold, plan.group_chunks[k]);
    else halving_steps(schedule, in, fold, plan.group_chunks[k]);
  }
}

void hierarchical_across_steps(Schedule& schedule, const ModelInput& in, const HierarchyPlan& plan, HierarchyLevel inter) {
  for (const HierarchyPlan::Piece& piece : plan.pieces) {
    if (inter == HierarchyLevel::tree) {
      tree_steps(schedule, in, piece.owners, piece.span);
      continue;
    }
    const PowerOfTwoFold fold = fold_members(piece.owners);
    const auto blocks = blocks_of(piece.span, piece.owners.size());
    halving_steps(schedule, in, fold, blocks);
    doubling_steps(schedule, in, fold, blocks);
  }
}

}  // namespace collsim
