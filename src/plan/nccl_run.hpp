#pragma once
// NCCL's algorithms in a run: the GPU system the ranks' hosts describe, the (algorithm,
// protocol, channels) NCCL's tuner would run (src/nccl/tuner.hpp) or the scenario forces,
// and the transport every message of the run pays (src/nccl/transport.hpp).
#include <memory>
#include <string>
#include <vector>

#include "comm/switch_ops.hpp"
#include "model/network.hpp"
#include "model/platform_host.hpp"
#include "nccl/send_recv.hpp"
#include "nccl/transport.hpp"
#include "nccl/tuner.hpp"
#include "scenario/scenario.hpp"

namespace collsim {

// Whether the scenario runs one of NCCL's algorithms: nccl (the tuner's choice), nccl-*.
bool runs_nccl(const Scenario& scenario);

// Whether the scenario runs hierarchical with NVLS inside the nodes (collective.intra nvls):
// then the platform's GPUs and NVSwitches are described as for NCCL (setup_nvls_level).
bool runs_nvls_level(const Scenario& scenario);

// Whether collsim's own algorithm (or auto's) sends with NCCL's send/recv where every host is
// a GPU (nccl.gpu_cost, default true): not NCCL's algorithms (their own transport), not
// parameter servers (their servers are processes of their own, no GPU kernels).
bool wants_gpu_transport(const Scenario& scenario);

// collsim's own algorithms on GPUs: a GPU runs them on NCCL's send/recv, and pays what NCCL
// charges that (nccl/send_recv.hpp): a kernel's launch per step (per collective where the run
// trains: send_recv_launch), a hop's latency, the protocol (by each message's size) and the
// path's bandwidth efficiency.
struct GpuP2pSetup {
  nccl::GpuSystem system;
  std::shared_ptr<const nccl::SendRecvCost> cost;
  std::string why;  // for people: what every message pays, and why
};
// `nvswitches`: the NVSwitch actors after the ranks that the messages reach (hierarchical's NVLS level).
GpuP2pSetup setup_gpu_p2p(const std::string& algorithm, nccl::SendRecvLaunch launch, double bytes,
                          const std::vector<PlatformHost>& hosts, const Network& routes, int nvswitches = 0);
// A collective alone is collsim's, written on send/recv: a launch per dependent step. A
// training iteration's (layers, rounds, compute, a model or parallelism) is a framework's call of NCCL's
// collective, for which collsim's algorithm stands in: one kernel, one launch (send_recv.hpp).
nccl::SendRecvLaunch send_recv_launch(const Scenario& scenario);

struct NcclSetup {
  nccl::GpuSystem system;
  nccl::Choice choice;    // an alltoall's: its protocol, its parts as channels, its plan as why
  std::string algorithm;  // collsim's name of the chosen algorithm ("nccl-ring", ..., "nccl-alltoall")
  std::string algo_label;  // NCCL's name of what runs ("Ring", ...; "P2P": send/recv)
  int fifo = 1;            // CollectiveArgs::fifo: the FIFO's chunks; an alltoall's peers in flight at once
  int lanes = 1;          // what CollectiveArgs::channels carries: the simulated rings or tree lanes
  double chunk_bytes = 0;  // what one step of a lane moves (NCCL's chunks of the channels it stands for)
  // The switches the algorithm reduces in (NVLS: each node's NVSwitch, in the order of the
  // locality groups; CollNet: rail i's SHARP switch, serving GPU i of every node): endpoints
  // after the ranks', the ranks each serves, and the actors each runs.
  std::vector<PlatformHost> switches;
  std::vector<std::vector<int>> switch_members;
  SwitchKind switch_kind = SwitchKind::nvlink;
  int actors_per_switch = 1;
  std::shared_ptr<const nccl::Transport> transport;
};

// The system of the ranks on `hosts` (with the platform's reducing `switches`; `routes`
// between the ranks), the choice for `algorithm` ("nccl" or one of NCCL's) and `bytes` per
// rank, and its transport. The hosts come from SimGrid's platform or the generator's structure.
NcclSetup setup_nccl(const Scenario& scenario, const std::string& algorithm, const std::vector<PlatformHost>& hosts,
                     const std::vector<PlatformHost>& switches, const Network& routes, double bytes);

// NCCL's allreduce on `system` (a run's ranks, or one communicator's group inside a parallel
// run): the tuner's choice or what `forced` forces (errors name `field`), its lanes, FIFO and
// chunk; no switches, no transport (setup_nccl adds them for a run).
NcclSetup choose_nccl_allreduce(const nccl::GpuSystem& system, const nccl::Forced& forced, double bytes,
                                const std::string& field);

// Logical elements per step of a pipelined NCCL algorithm on a vector of `logical_elems`
// (`logical_bytes`) per rank over `p` ranks: NCCL's chunk, larger when the run would send more
// than max_pipelined_messages (message_counts.hpp) in the simulation, or more than the model
// follows rank by rank (max_followed_messages, contention.hpp: beyond, it would price the steps
// in lock step, blind to the pipeline's FIFO and late waits).
size_t nccl_chunk_elements(const NcclSetup& nccl, uint64_t logical_elems, double logical_bytes, int p);

// The GPU system of the ranks on `hosts` (with the platform's `switches`; `routes` between the
// ranks). Throws InputError naming `field` when a host names no GPU or NIC the catalogue knows.
nccl::GpuSystem describe_gpu_ranks(const std::vector<PlatformHost>& hosts, const std::vector<PlatformHost>& switches,
                                   const Network& routes, const std::string& field);

// hierarchical's NVLS level (collective.intra nvls): each node's NVSwitch that reduces, as
// NCCL's NVLS finds them (switches, switch_members, switch_kind, actors_per_switch); refused
// in one line where the GPUs' NVSwitch does not reduce (NVLink SHARP: H100 and later).
NcclSetup setup_nvls_level(const std::vector<PlatformHost>& hosts, const std::vector<PlatformHost>& switches,
                           const Network& routes);

// One line for people: the choice, its protocol and channels, and what its transport charges.
std::string describe_nccl(const NcclSetup& setup);

}  // namespace collsim
