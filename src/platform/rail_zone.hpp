#pragma once
// The netzone of a rail-optimised GPU cluster (rail:N:G, docs/topologies.md): every GPU has
// two ports, an NVLink port to its node's NVSwitch and a NIC to the rail switch of its
// local index. Which port a message takes depends on both ends (same node: NVLink; other
// node: NIC), which SimGrid's zone hierarchy cannot say (a route between two zones is one
// per pair of zones, whatever the hosts), so this zone holds every GPU and computes each
// route from the two indices: no table, O(1) per route, any size.
//
// Switches that reduce in the network are hosts of the zone too (switch actors run there,
// comm/switch_ops.hpp): a node's NVSwitch (NVLink SHARP), reached from its GPUs through their
// NVLink ports, and a rail's switch (InfiniBand SHARP), reached through the GPUs' NICs.
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

  // pxn: route a GPU's send to another node's GPU on another rail through NCCL's PXN
  // (NVLink to the sender's node-mate on the destination's rail, then that GPU's NIC).
  RailZone(const std::string& name, int gpus_per_node, bool pxn)
      : NetZoneImpl(name), gpus_per_node_(gpus_per_node), pxn_(pxn) {}

  // Call in rank order (node-major), right after creating the GPU's host in this zone.
  void add_gpu(const simgrid::kernel::routing::NetPoint* host, Ports ports);
  // Rail j's uplink to the spine, for j = 0 .. G-1 in order.
  void add_rail_uplink(simgrid::s4u::SplitDuplexLink* uplink) { uplinks_.push_back(uplink); }
  // The reducing switch of node `node` (its NVSwitch) or of rail `rail` (its leaf switch).
  void add_node_switch(const simgrid::kernel::routing::NetPoint* host, int node) { place(host, {Kind::node_switch, node}); }
  void add_rail_switch(const simgrid::kernel::routing::NetPoint* host, int rail) { place(host, {Kind::rail_switch, rail}); }

  // Same node: NVLink UP, NVLink DOWN. Same rail: NIC UP, NIC DOWN. Otherwise: NIC UP,
  // the sender's rail uplink UP, the receiver's rail uplink DOWN, NIC DOWN; with PXN: NVLink
  // UP, the relay's NVLink DOWN, the relay's NIC UP, NIC DOWN. A GPU to itself: its NVLink
  // port up and down (through the NVSwitch). A GPU and its node's switch: its NVLink port;
  // a GPU and its rail's switch: its NIC. A GPU whose NIC is detoured (detour_nic) leaves
  // and enters its node as PXN does, through the node mate's NIC over NVLink, and reaches its
  // rail's switch from the mate's rail: NVLink UP, the mate's NVLink DOWN, the mate's NIC UP,
  // the mate's rail uplink UP, its own rail's uplink DOWN (and back the other way).
  void get_local_route(const simgrid::kernel::routing::NetPoint* src, const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override;

  // Recovery keeps a GPU whose NIC failed (docs/recovery.md, "A GPU kept when only its NIC
  // fails"): from now on its traffic to other nodes leaves and enters through `through`'s
  // NIC, a GPU of the same node, over NVLink (SimGrid asks the zone for a route at each
  // transfer: transfers started later take it). Both must be GPUs of this zone on one node.
  void detour_nic(const simgrid::kernel::routing::NetPoint* gpu, const simgrid::kernel::routing::NetPoint* through);
  // The detour undone (its NIC is back): `gpu`'s traffic to other nodes takes its own NIC
  // again, from the next transfer on.
  void restore_nic(const simgrid::kernel::routing::NetPoint* gpu);
  // Which GPU's NIC carries each GPU's traffic to other nodes (empty: each its own), and that
  // set back: recovery prices a detour on the routes it would give, then undoes it.
  std::vector<int> carriers() const { return nics_; }
  void set_carriers(std::vector<int> carriers) { nics_ = std::move(carriers); }
  // Whether two points are GPUs of the same node; whether a GPU's own NIC carries its traffic.
  bool same_node(const simgrid::kernel::routing::NetPoint* a, const simgrid::kernel::routing::NetPoint* b) const;
  bool own_nic(const simgrid::kernel::routing::NetPoint* gpu) const { return nic_of(point_of(gpu).index) == point_of(gpu).index; }
  // A GPU's own NIC.
  const simgrid::s4u::SplitDuplexLink* nic(const simgrid::kernel::routing::NetPoint* gpu) const {
    return gpus_[static_cast<size_t>(point_of(gpu).index)].nic;
  }

private:
  enum class Kind { gpu, node_switch, rail_switch };
  struct Point {
    Kind kind = Kind::gpu;
    int index = -1;  // GPU index (rank order), node or rail
  };
  void place(const simgrid::kernel::routing::NetPoint* point, Point what);
  Point point_of(const simgrid::kernel::routing::NetPoint* point) const;
  void gpu_to_gpu(int from, int to, simgrid::kernel::routing::Route* into, double* latency) const;
  int nic_of(int gpu) const { return nics_.empty() ? gpu : nics_[static_cast<size_t>(gpu)]; }
  void switch_route(Point gpu, Point other, bool up, simgrid::kernel::routing::Route* into, double* latency) const;

  int gpus_per_node_;
  bool pxn_;
  std::vector<Point> points_;  // by vertex id; index -1 for points of no kind
  std::vector<Ports> gpus_;
  std::vector<simgrid::s4u::SplitDuplexLink*> uplinks_;
  std::vector<int> nics_;  // by GPU: the GPU whose NIC carries its inter-node traffic (empty: each its own)
};

}  // namespace collsim
