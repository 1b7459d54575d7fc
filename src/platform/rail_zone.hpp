#pragma once
// The netzone of a rail-optimised GPU cluster (rail:N:G, docs/topologies.md): every GPU has
// two ports, an NVLink port to its node's NVSwitch and a NIC to the rail switch of its
// local index. Which port a message takes depends on both ends (same node: NVLink; other
// node: NIC), which SimGrid's zone hierarchy cannot say (a route between two zones is one
// per pair of zones, whatever the hosts), so this zone holds every GPU and computes each
// route from the two indices: no table, O(1) per route, any size.
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Link.hpp>
#include <vector>

namespace collsim {

class RailZone final : public simgrid::kernel::routing::NetZoneImpl {
public:
  // The split-duplex links of one GPU: its NVLink port and its NIC.
  struct Ports {
    simgrid::s4u::SplitDuplexLink* nvlink = nullptr;
    simgrid::s4u::SplitDuplexLink* nic = nullptr;
  };

  RailZone(const std::string& name, int gpus_per_node) : NetZoneImpl(name), gpus_per_node_(gpus_per_node) {}

  // Call in rank order (node-major), right after creating the GPU's host in this zone.
  void add_gpu(const simgrid::kernel::routing::NetPoint* host, Ports ports);
  // Rail j's uplink to the spine, for j = 0 .. G-1 in order.
  void add_rail_uplink(simgrid::s4u::SplitDuplexLink* uplink) { uplinks_.push_back(uplink); }

  // Same node: NVLink UP, NVLink DOWN. Same rail: NIC UP, NIC DOWN. Otherwise: NIC UP,
  // the sender's rail uplink UP, the receiver's rail uplink DOWN, NIC DOWN. A GPU to
  // itself: its NVLink port up and down (through the NVSwitch).
  void get_local_route(const simgrid::kernel::routing::NetPoint* src, const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override;

private:
  int gpu_index(const simgrid::kernel::routing::NetPoint* point) const;

  int gpus_per_node_;
  std::vector<long> index_of_vertex_;  // vertex id -> GPU index (rank order), -1 for other points
  std::vector<Ports> gpus_;
  std::vector<simgrid::s4u::SplitDuplexLink*> uplinks_;
};

}  // namespace collsim
