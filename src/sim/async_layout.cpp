#include "sim/async_layout.hpp"

#include "algorithms/hierarchy.hpp"
#include "plan/run_plan.hpp"

namespace collsim {

std::pair<size_t, size_t> AsyncBucket::carried(int server) const {
  const Chunk& shard = shards[static_cast<size_t>(server)];
  return {offset + map.at(shard.offset), offset + map.at(shard.offset + shard.count)};
}

AsyncLayout async_layout(const RunPlan& plan) {
  AsyncLayout layout;
  layout.servers = plan.model.servers;
  layout.bucketed = !plan.training.buckets.empty();
  if (!layout.bucketed) {
    const CarriedMap whole{plan.payload.carried_elems, plan.payload.logical_elems, nullptr};
    layout.buckets.push_back({0, whole, split_evenly(whole.logical, layout.servers)});
  }
  for (const BucketSlice& slice : plan.training.buckets)
    layout.buckets.push_back({slice.offset, slice.map, split_evenly(slice.map.logical, layout.servers)});
  const int p = plan.workers;
  if (plan.model.deployment.local_aggregation) {
    layout.nodes = locality_groups(plan.locality.ids);
  } else {
    for (int r = 0; r < p; ++r) layout.nodes.push_back({r});
  }
  layout.node_of.assign(static_cast<size_t>(p), 0);
  for (size_t i = 0; i < layout.nodes.size(); ++i)
    for (int r : layout.nodes[i]) layout.node_of[static_cast<size_t>(r)] = static_cast<int>(i);
  return layout;
}

}  // namespace collsim
