#include "algorithms/model_input.hpp"

#include <stdexcept>

#include "algorithms/collective.hpp"
#include "algorithms/hierarchy.hpp"
#include "comm/buffer.hpp"

namespace collsim {

double ModelInput::bytes(size_t count) const { return static_cast<double>(count) * bytes_per_elem; }

std::vector<std::vector<int>> model_groups(const ModelInput& in) {
  if (!in.locality.empty()) return locality_groups(in.locality);
  const std::vector<int> sizes = in.group_sizes.empty() ? std::vector<int>{in.p} : in.group_sizes;
  int ranks = 0;
  for (int size : sizes) ranks += size;
  if (ranks != in.p) throw std::logic_error("model_groups: group sizes do not add up to p");
  return consecutive_groups(sizes);
}

std::vector<int> group_sizes_of(const std::vector<int>& locality, const std::vector<int>& members) {
  std::vector<int> ids;
  for (int world : members) ids.push_back(locality[static_cast<size_t>(world)]);
  std::vector<int> sizes;
  for (const auto& group : locality_groups(ids)) sizes.push_back(static_cast<int>(group.size()));
  return sizes;
}

ModelInput model_for_members(const ModelInput& all, const std::vector<int>& locality, const std::vector<int>& members) {
  ModelInput in = all;
  in.p = static_cast<int>(members.size());
  // the root and the servers the group runs with (CollectiveArgs in the worker): a group too
  // small for the scenario's root or servers uses rank 0, or every rank (pricing the world's
  // root 4 in a rebuilt group of 4 read past the ranks, and crashed)
  in.root = root_in_group(all.root, in.p);
  if (!all.deployment.processes) in.servers = servers_in_group(all.servers, in.p);
  if (!in.group_sizes.empty()) in.group_sizes = group_sizes_of(locality, members);
  // the group's ranks on the platform: its members' hosts (the route cache is by world rank)
  in.endpoints = members;
  if (!in.locality.empty()) {
    in.locality.clear();
    for (int world : members) in.locality.push_back(locality[static_cast<size_t>(world)]);
  }
  return in;
}

}  // namespace collsim
