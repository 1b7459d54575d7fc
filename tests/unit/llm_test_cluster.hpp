#pragma once
// The cluster the layout tests work by hand: 4 GPUs a node, NVLink 100 GB/s and 1 us, a NIC
// of 10 GB/s and 5 us, a test GPU of 1 TFLOP/s and 80 GB, compute at 50% of its peak.
#include "llm/step_estimate.hpp"

namespace collsim::llm {

inline Cluster hand_worked_cluster() {
  Cluster cluster;
  cluster.gpus_per_node = 4;
  cluster.nvlink = {100e9, 1e-6};
  cluster.nic = {10e9, 5e-6};
  cluster.gpu = {"test", 1e12, 80e9, "a test GPU"};
  cluster.efficiency = 0.5;
  return cluster;
}

}  // namespace collsim::llm
