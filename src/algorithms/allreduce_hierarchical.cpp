// Hierarchical allreduce (as in NCCL's and Horovod's two-level schemes): the ranks form
// locality groups (a platform zone each, or blocks of collective.group_size ranks).
// 1. ring reduce-scatter inside each group: member i ends with chunk i of its group;
// 2. ring allreduce of each chunk among the members that hold it, one per group (g such
//    rings at once, each over the G groups): only n/g bytes per rank cross between groups;
// 3. ring allgather inside each group.
// G groups of g ranks: 2(g-1)(alpha + n/(gB)) inside, 2(G-1)(alpha' + n/(gGB')) between.
// Groups of different sizes cut the vector differently: then each piece that lies in one
// chunk of every group is allreduced by its owners (hierarchy.hpp), which is the same
// algorithm when the groups are equal. One group is the ring; groups of one rank, a ring
// over all ranks of the whole vector. collective.intra and inter choose other algorithms at
// either level (hierarchy_levels.cpp; NVLS inside the nodes: hierarchy_nvls.cpp).
#include <algorithm>
#include <optional>

#include "algorithms/algorithms.hpp"
#include "algorithms/channels.hpp"
#include "algorithms/hierarchy.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

// hierarchical-begin
void allreduce_hierarchical(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  std::vector<int> locality;
  for (int r = 0; r < comm.size(); ++r) locality.push_back(comm.locality(r));
  const auto groups = locality_groups(locality);
  const auto slices = channel_slices(buf.size(), args.channels);
  std::vector<RingTask> inside, across;
  std::optional<HierarchyPlan> levels;  // collective.intra or inter other than ring (one channel)
  for (int c = 0; c < args.channels; ++c) {
    // channel c works on its slice, every group turned by c members (channels.hpp)
    const Chunk slice = slices[static_cast<size_t>(c)];
    const HierarchyPlan plan = plan_hierarchy(turned_groups(groups, c), slice.count);
    if (args.intra != HierarchyLevel::ring || args.inter != HierarchyLevel::ring) levels = plan;
    const auto [group, local] = plan.place(comm.rank());
    // 1. reduce-scatter inside my group: I end with chunk `local` of my group's cut
    inside.push_back({plan.groups[group], local, slice});
    // 2. allreduce each piece of my chunk with its owners in the other groups: one ring over
    //    the groups per piece (one piece when the groups are equal), all of them at once
    for (const HierarchyPlan::Piece& piece : plan.pieces) {
      if (piece.owners[group] != comm.rank()) continue;
      across.push_back({piece.owners, group, {slice.offset + piece.span.offset, piece.span.count}});
    }
  }
  if (args.intra == HierarchyLevel::nvls && nvls_ring_pipelined(*levels, args.inter))
    return hierarchical_nvls_ring(comm, buf, args, static_cast<int>(groups.size()));
  if (args.intra == HierarchyLevel::ring) rings_reduce_scatter(comm, buf, *args.op, inside, "reduce-scatter");
  else if (args.intra == HierarchyLevel::nvls) hierarchical_nvls_inside(comm, buf, *levels, false);
  else hierarchical_inside(comm, buf, args.op, *levels, false);
  if (args.inter == HierarchyLevel::ring) {
    rings_reduce_scatter(comm, buf, *args.op, across, "inter-reduce-scatter");
    rings_allgather(comm, buf, across, "inter-allgather");
  } else {
    hierarchical_across(comm, buf, *args.op, *levels, args.inter);
  }
  // 3. allgather inside my group: every member passes on its complete chunk
  if (args.intra == HierarchyLevel::ring) rings_allgather(comm, buf, inside, "allgather");
  else if (args.intra == HierarchyLevel::nvls) hierarchical_nvls_inside(comm, buf, *levels, true);
  else hierarchical_inside(comm, buf, args.op, *levels, true);
}
// hierarchical-end

namespace {

// One ring step in every group of each size at once, for every channel; groups of different
// sizes run side by side (each size its own chain of g-1 steps), all after the steps
// `after`, their receivers reducing when `reduced`. Returns the last step of every chain.
std::vector<int> ring_steps_in_groups(Schedule& schedule, const ModelInput& in, const std::vector<HierarchyPlan>& plans,
                                      const std::vector<int>& after, bool reduced) {
  std::vector<int> ends;
  std::vector<size_t> sizes;
  for (const auto& group : plans.front().groups)
    if (group.size() > 1 && std::find(sizes.begin(), sizes.end(), group.size()) == sizes.end()) sizes.push_back(group.size());
  for (size_t size : sizes) {
    Step& step = schedule.step_after(after, static_cast<int>(size) - 1);
    step.reduced = reduced;
    for (const HierarchyPlan& plan : plans)
      for (size_t k = 0; k < plan.groups.size(); ++k) {
        const auto& group = plan.groups[k];
        if (group.size() != size) continue;
        for (size_t i = 0; i < size; ++i)
          step.send(group[i], group[(i + 1) % size], in.bytes(plan.group_chunks[k].front().count));
      }
    ends.push_back(schedule.last());
  }
  return ends.empty() ? after : ends;
}

}  // namespace

// Reduce-scatter in the groups, 2(G-1) ring steps between them (each piece's owners), then
// allgather in the groups; channel c does the same on its slice with every group turned by c.
Schedule schedule_allreduce_hierarchical(const ModelInput& in) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  // groups of different sizes, and ranks outside the pieces' rings, move on on their own
  schedule.mark_rank_by_rank();
  const auto groups = model_groups(in);
  const auto slices = channel_slices(in.elems, in.channels);
  std::vector<HierarchyPlan> plans;
  for (int c = 0; c < in.channels; ++c)
    plans.push_back(plan_hierarchy(turned_groups(groups, c), slices[static_cast<size_t>(c)].count));
  const bool ring_inside = in.intra_level == HierarchyLevel::ring;
  std::vector<int> ends;
  const bool nvls_inside = in.intra_level == HierarchyLevel::nvls;
  if (nvls_inside && nvls_ring_pipelined(plans.front(), in.inter_level))
    return hierarchical_nvls_ring_schedule(in, static_cast<int>(groups.size()));
  if (ring_inside) ends = ring_steps_in_groups(schedule, in, plans, {}, true);
  else if (nvls_inside) hierarchical_nvls_steps(schedule, in, plans.front(), false);
  else hierarchical_inside_steps(schedule, in, plans.front(), false);
  const auto group_count = static_cast<int>(groups.size());
  if (in.inter_level != HierarchyLevel::ring) {
    hierarchical_across_steps(schedule, in, plans.front(), in.inter_level);
  } else if (group_count > 1) {
    // the rings between groups: G-1 reduce-scatter steps, then G-1 allgather steps
    for (const StepRun& run : reduce_then_gather(in, group_count - 1)) {
      Step& across = schedule.step_after(ends, run.repeat);
      across.reduced = run.reduced;
      for (const HierarchyPlan& plan : plans)
        for (const HierarchyPlan::Piece& piece : plan.pieces)
          for (int k = 0; k < group_count; ++k)
            across.send(piece.owners[static_cast<size_t>(k)], piece.owners[static_cast<size_t>((k + 1) % group_count)],
                        in.bytes(even_chunk(piece.span.count, group_count, 0).count));
      ends = {schedule.last()};
    }
  }
  if (ring_inside) ring_steps_in_groups(schedule, in, plans, ends, false);
  else if (nvls_inside) hierarchical_nvls_steps(schedule, in, plans.front(), true);
  else hierarchical_inside_steps(schedule, in, plans.front(), true);
  return schedule;
}

}  // namespace collsim
