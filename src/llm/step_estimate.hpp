#pragma once
// A training step of a layout priced by the alpha-beta model, before any simulation: the
// layout search's first ranking (docs/training.md#layout-search). Each communicator's
// collective is a ring on its links (Patarasuk & Yuan 2009: allreduce 2(g-1)(alpha +
// n/gB), allgather, reduce-scatter and alltoall (g-1)(alpha + n/gB), a pipeline message
// alpha + n/B), compute is FLOPs at a stated fraction of the GPU's peak, the schedule 1F1B
// (Narayanan et al. SC'21 sec. 2.2.1: m + p - 1 slots of one micro-batch's forward and
// backward on the slowest stage; interleaved over v chunks, sec. 2.2.2: v m + p - 1 slots of
// one chunk's, each chunk with its own activation and gradient messages), the data-parallel gradient collective overlapped with
// the last micro-batch's backward. Nothing here shares a link between two communicators:
// that is what the simulated step (src/parallel/) adds.
#include <string>

#include "llm/gpu_compute.hpp"
#include "llm/layer_costs.hpp"

namespace collsim::llm {

struct LinkCost {
  double bandwidth = 0;  // bytes/s, each direction
  double latency = 0;    // seconds
};

// Groups are placed tensor fastest, then data, then pipeline (Megatron's rank order): a
// group whose span (stride x size) fits in a node runs on NVLink, else on the NICs.
struct Cluster {
  int gpus_per_node = 8;
  LinkCost nvlink;   // per GPU, to its node's switch
  LinkCost nic;      // per GPU, its own NIC
  GpuCompute gpu;
  double efficiency = 1;  // of the peak, stated by the run
};

struct CommunicatorTime {
  double total = 0;    // the step's time in this communicator's collectives (one GPU of the slowest stage)
  double exposed = 0;  // of it, on the step's critical path (all of it but the data dimension's overlap)
  bool crosses_nodes = false;
};

struct StepEstimate {
  double step_time = 0;
  // step_time = compute_time + the exposed times of the four + bubble_time
  double compute_time = 0;     // m micro-batches' FLOPs on the slowest stage
  double bubble_time = 0;      // the p - 1 idle slots of 1F1B's fill and drain (each a chunk's when interleaved)
  double bubble_fraction = 0;  // (p - 1) / (v m + p - 1)
  CommunicatorTime tensor, pipeline, data, expert;
  double mfu = 0;              // model FLOPs / (step time x GPUs x peak)
  double tokens_per_second = 0;
  std::string bound_by;        // the largest part after compute: "tensor", "pipeline", "data", "expert" or "bubble"
};

// The collective's time on a ring of `group` members over `link`.
double ring_time(Collective kind, double bytes, int group, const LinkCost& link);

StepEstimate estimate_step(const TransformerModel& model, const Layout& layout, const Cluster& cluster);

// What simulating the layout's step costs, before simulating it: the messages its
// collectives and pipeline send, every collective counted as a ring (an allreduce 2(g-1)
// messages per rank, an allgather, reduce-scatter or alltoall g-1), the gradient buckets
// made as the simulated step makes them (`bucket_parameters` per bucket). A simulated
// message costs about the same whatever its size (docs/performance.md), so this is the
// simulation's work; other algorithms than rings send fewer or more per rank.
double step_messages(const TransformerModel& model, const Layout& layout, double bucket_parameters);

}  // namespace collsim::llm
