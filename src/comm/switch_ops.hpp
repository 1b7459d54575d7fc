#pragma once
// Switches that reduce in the network: NVLink SHARP on a node's NVSwitch (NCCL's NVLS, H100
// and later) and SHARP on a rail's InfiniBand switch (NCCL's CollNet). A switch is no rank:
// a switch actor on the switch's host (sim/switch_actors.cpp) runs the switch's side of the
// algorithm (AlgorithmInfo::switch_run), on real data. For the ranks it serves it is one
// more peer of their Comm, numbered from comm.size() on (Comm::reducing_switch); messages
// to and from it cross the GPU's NVLink port (NVSwitch) or NIC (rail switch) only.
#include <vector>

namespace collsim {

// `server`: no switch but a parameter server's process on a host of its own or beside a
// worker (collective.parameter_server), a peer after the ranks in the same way.
enum class SwitchKind { nvlink, network, server };

struct SwitchPort {
  SwitchKind kind = SwitchKind::nvlink;
  int endpoint = 0;          // its endpoint in the platform's routes: after the world's ranks
  std::vector<int> members;  // the group ranks it serves, in rank order
};

}  // namespace collsim
