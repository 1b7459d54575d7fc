#pragma once
// NCCL's in-network reductions inside a parallel run (docs/parallelism.md#switches-that-reduce):
// a communicator whose allreduce NCCL runs as NVLS or NVLSTree reduces in the NVSwitch of each
// node its group spans, one as CollNet in the SHARP switch of each rail its GPUs are on. A
// switch is an endpoint after the run's ranks (workers + s, s its index among the platform's
// reducing switches, comm/switch_ops.hpp) and a peer after each group's ranks; its side of the
// algorithm (AlgorithmInfo::switch_run) runs in actors of its own on the switch's host, once
// per collective of the group, on the collective's tag, on real data.
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/collective.hpp"
#include "comm/switch_ops.hpp"
#include "model/network.hpp"
#include "nccl/constants.hpp"
#include "nccl/transport.hpp"
#include "plan/run_plan.hpp"

namespace collsim {

class CommGroup;

// A host of the platform that reduces in the network: what it is and what it serves.
struct ReducingSwitch {
  std::string host;
  nccl::EndpointKind kind = nccl::EndpointKind::nvswitch;
  std::string serves;  // the node ("node-3") of an NVSwitch, the rail ("2") of a SHARP switch
};

// The platform's reducing switches (its hosts with a `role`, in the engine's order) and what
// the run's ranks' hosts say of their node and rail; empty outside the engine.
struct RunSwitches {
  int workers = 0;
  std::vector<ReducingSwitch> switches;  // endpoint workers + s
  std::vector<std::string> rank_node, rank_rail;  // [world rank]
};
RunSwitches run_switches(const RunPlan& plan);

// What a transport prices by endpoint: the ranks' GPUs, then the switches' kinds.
std::vector<nccl::EndpointKind> endpoint_kinds(const RunSwitches& run);

// The routes between the ranks (endpoints 0 .. workers - 1) and the switches (workers + s):
// the cost model's network of a group whose algorithm reduces in switches.
std::shared_ptr<const Network> network_with_switches(const RunPlan& plan);

// The switch actors of one group (world ranks `members`) for NCCL's `algo`, in the order its
// algorithm addresses them (NVLS: each node's reductions, in the order of the members' nodes,
// then each node's multicasts; CollNet: one per member index in a node, on that member's
// rail), each with the group ranks it serves; and their hosts. Empty for an algorithm that
// reduces in no switch. Throws InputError naming `where` when a switch the group needs is not
// on the platform.
struct GroupSwitches {
  std::vector<SwitchPort> ports;
  std::vector<std::string> hosts;  // [port]
};
GroupSwitches group_switches(const RunSwitches& run, nccl::Algo algo, const std::vector<int>& members,
                             const std::vector<int>& world_localities, const std::string& where);

// Why `algo` cannot reduce in switches for the group `members` here (empty: it can).
std::string switches_missing(const RunSwitches& run, nccl::Algo algo, const std::vector<int>& members,
                             const std::vector<int>& world_localities);

// Starts the switches' sides of one collective of `group` (its ports set: CommGroup::set_switches)
// on tag `tag`, each in a daemon actor on its switch's host with a vector shaped as the ranks'
// (`dtype`, `carried` and `logical` elements); an error inside lands in `failure`.
void start_switch_sides(const std::shared_ptr<CommGroup>& group, const std::vector<std::string>& hosts, int tag,
                        AlgorithmFn side, Dtype dtype, size_t carried, size_t logical, const CollectiveArgs& args,
                        std::exception_ptr& failure);

}  // namespace collsim
