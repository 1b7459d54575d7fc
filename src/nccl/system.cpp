#include "nccl/system.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

#include "nccl/constants.hpp"
#include "util/errors.hpp"
#include "util/suggest.hpp"

namespace collsim::nccl {

double GpuSystem::nccl_nvlink_gbs() const { return gpu->nvlink_links * nvlink_link_bandwidth_gbs(gpu->arch); }

double GpuSystem::nvlink_efficiency() const {
  return nvlink_link_bandwidth_gbs(gpu->arch) * 1e9 / gpu->nvlink_link_bandwidth;
}

namespace {

template <typename Model>
const Model* model_of(const std::string& name, const Model* (*find)(std::string_view), const char* what,
                      const std::vector<std::string>& names, const std::string& field) {
  if (name.empty())
    throw InputError(fmt::format("{}: NCCL's algorithms run on GPUs: the platform's hosts name no {} (host property "
                                 "{}; the rail generators and the dgx-, gb200- presets set it)",
                                 field, what, what));
  const Model* model = find(name);
  if (model == nullptr)
    throw InputError(fmt::format("{}: unknown {} '{}' in the host property {}{}; allowed: {}", field, what, name, what,
                                 did_you_mean(name, names), join(names)));
  return model;
}

}  // namespace

GpuSystem describe_system(const std::vector<RankProperties>& properties, double nvlink_bandwidth,
                          const std::vector<std::string>& switch_roles, const std::string& field) {
  GpuSystem system;
  system.ranks = static_cast<int>(properties.size());
  system.gpu = model_of(properties.front().gpu, find_gpu_model, "gpu", gpu_model_names(), field);
  system.nic = model_of(properties.front().nic, find_nic_model, "nic", nic_model_names(), field);
  system.cpu = properties.front().cpu.empty() ? CpuVendor::intel : parse_cpu_vendor(properties.front().cpu, field);
  std::map<std::string, int> index;
  std::vector<int> members;
  for (const RankProperties& rank : properties) {
    if (rank.gpu != properties.front().gpu || rank.nic != properties.front().nic)
      throw InputError(fmt::format("{}: the ranks mix GPUs or NICs ({} with {}, {} with {}): NCCL's tuning needs one "
                                   "kind",
                                   field, properties.front().gpu, properties.front().nic, rank.gpu, rank.nic));
    // a host without a node is a node of its own
    const std::string node = rank.node.empty() ? fmt::format("rank-{}", system.node_of.size()) : rank.node;
    const auto [it, added] = index.emplace(node, static_cast<int>(index.size()));
    if (added) members.push_back(0);
    ++members[static_cast<size_t>(it->second)];
    system.node_of.push_back(it->second);
  }
  system.nodes = static_cast<int>(index.size());
  system.ppn = *std::min_element(members.begin(), members.end());
  system.max_ppn = *std::max_element(members.begin(), members.end());
  system.nvlink_bandwidth = nvlink_bandwidth;
  system.nics_per_node = system.max_ppn;
  const auto count = [&](const char* role) { return std::count(switch_roles.begin(), switch_roles.end(), role); };
  system.nvls = system.gpu->nvlink_sharp && count("nvswitch") >= system.nodes;
  system.collnet = system.nic->sharp && count("sharp-switch") > 0;
  return system;
}

GpuSystem group_system(const GpuSystem& world, const std::vector<int>& members) {
  GpuSystem group = world;
  group.ranks = static_cast<int>(members.size());
  std::map<int, int> per_node;
  for (int member : members) ++per_node[world.node_of.at(static_cast<size_t>(member))];
  group.nodes = static_cast<int>(per_node.size());
  group.ppn = group.max_ppn = per_node.begin()->second;
  for (const auto& [node, count] : per_node) {
    group.ppn = std::min(group.ppn, count);
    group.max_ppn = std::max(group.max_ppn, count);
  }
  group.nics_per_node = group.max_ppn;
  return group;
}

}  // namespace collsim::nccl
