#include "parallel/gpu_costs.hpp"

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include "nccl/send_recv.hpp"
#include "nccl/transport.hpp"
#include "parallel/group_switches.hpp"
#include "plan/nccl_run.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

namespace {

PlatformHost host_as_nccl_reads_it(const sg4::Host* host, int index) {
  PlatformHost out{host->get_name(), {}, index};
  for (const auto& [key, value] : *host->get_properties()) out.properties.emplace_back(key, value);
  return out;
}

}  // namespace

std::optional<nccl::GpuSystem> run_gpu_system(const RunPlan& plan) {
  if (!plan.platform.gpu_transport || plan.model.network == nullptr || !sg4::Engine::is_initialized()) return std::nullopt;
  const sg4::Engine& engine = *sg4::Engine::get_instance();
  std::vector<PlatformHost> ranks, switches;
  for (const std::string& name : plan.rank_hosts) {
    const sg4::Host* host = engine.host_by_name_or_null(name);
    if (host == nullptr) return std::nullopt;
    ranks.push_back(host_as_nccl_reads_it(host, static_cast<int>(ranks.size())));
  }
  for (const sg4::Host* host : engine.get_all_hosts())
    if (host->get_property("role") != nullptr) switches.push_back(host_as_nccl_reads_it(host, static_cast<int>(switches.size())));
  return describe_gpu_ranks(ranks, switches, *plan.model.network, "topology");
}

void price_send_recv(const nccl::GpuSystem& world, const std::vector<int>& members, double bytes, GroupAlgorithm& chosen) {
  auto cost = std::make_shared<const nccl::SendRecvCost>(nccl::group_system(world, members),
                                                          nccl::SendRecvLaunch::per_collective, bytes);
  chosen.launch = cost->collective_overhead();
  chosen.cost = std::move(cost);
}

GroupAlgorithm nccl_group_allreduce(const RunPlan& plan, const nccl::GpuSystem& world, const std::string& asked,
                                    double bytes, Dtype dtype, const std::vector<int>& members, const std::string& where,
                                    bool switches_follow) {
  const NcclSpec& spec = plan.scenario.nccl;
  nccl::Forced forced;
  forced.algo = asked == "nccl" ? spec.algo : nccl::algo_of(asked);
  forced.proto = spec.proto;
  forced.channels = spec.channels;
  // NVLS, NVLSTree and CollNet reduce in the switches of the group's nodes or rails, as in a
  // run of their own (parallel/group_switches.hpp), where the platform has them; a group that
  // recovery may rebuild (switches_follow false) leaves them out: its switches would not follow
  const RunSwitches switches = run_switches(plan);
  for (const nccl::Algo algo : nccl::all_algos())
    if (nccl::reduces_in_switch(algo)) {
      const std::string missing = !switches_follow ? "its switches do not follow a rebuilt group: not with recovery"
                                                   : switches_missing(switches, algo, members, plan.locality.ids);
      if (!missing.empty()) forced.set_aside.push_back({algo, missing});
    }
  const nccl::GpuSystem group = nccl::group_system(world, members);
  const NcclSetup setup = choose_nccl_allreduce(group, forced, bytes, where);
  const nccl::TransportChoice transport{.algo = setup.choice.chosen.algo, .proto = setup.choice.chosen.proto,
                                        .channels = setup.choice.channels, .messages_at_once = setup.lanes,
                                        .point_to_point = false};
  auto cost = std::make_shared<const nccl::Transport>(group, transport, endpoint_kinds(switches));
  GroupAlgorithm chosen;
  chosen.algorithm = &find_algorithm(Collective::allreduce, setup.algorithm, where);
  chosen.channels = setup.lanes;
  chosen.fifo = setup.fifo;
  chosen.hop_inside = cost->hop_latency(nccl::Hw::nvlink);
  chosen.hop_across = cost->hop_latency(nccl::Hw::net);
  const auto elem_bytes = static_cast<double>(dtype_size(dtype));
  chosen.segment_elems =
      nccl_chunk_elements(setup, static_cast<uint64_t>(bytes / elem_bytes), bytes, static_cast<int>(members.size()));
  chosen.launch = cost->collective_overhead();
  chosen.cost = std::move(cost);
  chosen.reason = fmt::format("NCCL's tuner for this group ({} GPUs, {} node(s) of {} to {}) at {}: {}", group.ranks,
                              group.nodes, group.ppn, group.max_ppn, format_size(bytes), setup.choice.why);
  chosen.nccl = fmt::format("{}/{} on {} channels", setup.algo_label, nccl::proto_name(setup.choice.chosen.proto),
                            setup.choice.channels);
  return chosen;
}

}  // namespace collsim
