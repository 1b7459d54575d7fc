#pragma once
// What NCCL sees of a platform: its GPUs, how they group into nodes, their NVLink and NICs,
// and which switches reduce in the network. sim/ builds it from the platform's host
// properties (gpu, nic, cpu, node: the rail generators set them, a platform file may too)
// and its switch hosts; the tuner (tuner.hpp) and the transport (transport.hpp) read it.
#include <string>
#include <vector>

#include "platform/gpu_catalogue.hpp"

namespace collsim::nccl {

struct GpuSystem {
  int ranks = 1;
  int nodes = 1;                 // distinct `node` properties among the ranks
  int ppn = 1;                   // the fewest ranks of one node (NCCL's minLocalRanks)
  int max_ppn = 1;               // the most
  std::vector<int> node_of;      // by rank: 0 .. nodes-1, in order of first appearance
  const GpuModel* gpu = nullptr;
  const NicModel* nic = nullptr;
  CpuVendor cpu = CpuVendor::intel;
  double nvlink_bandwidth = 0;   // bytes/s per GPU and direction, as the platform builds it
  int nics_per_node = 1;         // one per GPU on rail platforms
  bool nvls = false;             // every node has an NVSwitch that reduces (an nvswitch host)
  bool collnet = false;          // every rank reaches a SHARP switch (a sharp-switch host)

  // NVLink bandwidth per GPU and direction as NCCL's topology counts it, GB/s (links x
  // SMxx_NVLINK_BW: 370.8 for an H100).
  double nccl_nvlink_gbs() const;
  // NIC bandwidth as NCCL reads it (the port's speed / 8000), GB/s.
  double nccl_nic_gbs() const { return nic->line_rate / 1e9; }
  // The share of the NVLink line rate NCCL's topology counts usable (20.6 / 25 on H100).
  double nvlink_efficiency() const;
};

// The system of these ranks from each rank's host properties (`properties[r]` holds gpu,
// nic, cpu and node); `switch_roles` are the platform's switch hosts' roles. Throws
// InputError naming `field` when a rank says no GPU or NIC the catalogue knows, or when
// the ranks mix GPUs.
struct RankProperties {
  std::string node, gpu, nic, cpu;
};
GpuSystem describe_system(const std::vector<RankProperties>& properties, double nvlink_bandwidth,
                          const std::vector<std::string>& switch_roles, const std::string& field);


// The system one communicator of a run sees (a tensor or data-parallel group of a parallel
// run): `members` (world ranks of `world`), the nodes they are on and their GPUs per node, as
// NCCL's communicator of those ranks counts them (its NICs per node: one per member GPU, the
// rail platforms' one NIC per GPU). node_of stays by world rank: a transport built on it
// prices the messages between world ranks.
GpuSystem group_system(const GpuSystem& world, const std::vector<int>& members);

}  // namespace collsim::nccl
