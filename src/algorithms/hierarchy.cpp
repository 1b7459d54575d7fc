#include "algorithms/hierarchy.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace collsim {

std::vector<std::vector<int>> locality_groups(const std::vector<int>& locality) {
  std::vector<std::vector<int>> groups;
  std::map<int, size_t> index_of;  // locality id -> its group
  for (int rank = 0; rank < static_cast<int>(locality.size()); ++rank) {
    const auto [it, fresh] = index_of.try_emplace(locality[static_cast<size_t>(rank)], groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(rank);
  }
  return groups;
}

std::vector<std::vector<int>> consecutive_groups(const std::vector<int>& sizes) {
  std::vector<std::vector<int>> groups;
  int next = 0;
  for (int size : sizes) {
    groups.emplace_back();
    for (int i = 0; i < size; ++i) groups.back().push_back(next++);
  }
  return groups;
}

std::vector<int> block_sizes(int p, int block) {
  std::vector<int> sizes;
  for (int first = 0; first < p; first += block) sizes.push_back(std::min(block, p - first));
  return sizes;
}

namespace {

// The index of the chunk of split_evenly(count, parts) that holds element `at` < count
// (base is 0 only when count < parts, and then at < extra).
int chunk_holding(size_t at, size_t count, size_t parts) {
  const size_t base = count / parts, extra = count % parts;
  // the first `extra` chunks hold base + 1 elements, the others base
  if (at < extra * (base + 1)) return static_cast<int>(at / (base + 1));
  return static_cast<int>(extra + (at - extra * (base + 1)) / base);
}

}  // namespace

HierarchyPlan plan_hierarchy(std::vector<std::vector<int>> groups, size_t count) {
  HierarchyPlan plan;
  plan.groups = std::move(groups);
  std::vector<size_t> cuts{count};
  for (const auto& group : plan.groups) {
    if (group.empty()) throw std::logic_error("plan_hierarchy: an empty group");
    plan.group_chunks.push_back(split_evenly(count, static_cast<int>(group.size())));
    for (const Chunk& chunk : plan.group_chunks.back()) cuts.push_back(chunk.offset);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  // Between two consecutive cuts, every group's chunk is the same: one piece.
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    HierarchyPlan::Piece piece{{cuts[i], cuts[i + 1] - cuts[i]}, {}};
    for (const auto& group : plan.groups)
      piece.owners.push_back(group[static_cast<size_t>(chunk_holding(cuts[i], count, group.size()))]);
    plan.pieces.push_back(std::move(piece));
  }
  return plan;
}

HierarchyPlan::Place HierarchyPlan::place(int rank) const {
  for (size_t k = 0; k < groups.size(); ++k) {
    const auto found = std::find(groups[k].begin(), groups[k].end(), rank);
    if (found != groups[k].end()) return {static_cast<int>(k), static_cast<int>(found - groups[k].begin())};
  }
  throw std::logic_error("HierarchyPlan::place: a rank in no group");
}

bool HierarchyPlan::even() const {
  return std::all_of(groups.begin(), groups.end(), [&](const auto& g) { return g.size() == groups.front().size(); });
}

}  // namespace collsim
