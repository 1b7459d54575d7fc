#pragma once
// ZeRO stage 3 (Rajbhandari et al. 2020, section 5.3; PyTorch FSDP's FULL_SHARD): every
// worker keeps only its shard of the parameters, gradients and optimizer states. The unit
// of sharding is the bucket (FSDP's size-based wrapping groups layers the same way): a
// bucket's parameters are all-gathered before the forward of its first layer and again
// before the backward of its last layer (they are freed after use: ZeRO's 3x volume), and
// its gradients are reduce-scattered once backward has made them.
//
// The communication stream runs one collective at a time in a fixed order; each may start
// only once a device event has happened (its gate). The device runs forward layers
// 0..L-1 then backward L-1..0, each layer after the previous one and after its unit's
// all-gather.
#include <vector>

#include "training/iteration.hpp"

namespace collsim {

struct StreamOp {
  enum class Kind { gather, reduce_scatter } kind = Kind::gather;
  int bucket = 0;
  // Gate: device task `task` (see DeviceTask) has started (gate_on_end false) or ended; -1: none.
  int task = -1;
  bool gate_on_end = false;
};

// Device tasks in the order they run: forward of layer 0..L-1, then backward of L-1..0.
struct DeviceTask {
  bool forward = true;
  int layer = 0;
  double duration = 0;  // seconds at nominal speed
  int needs = -1;       // the stream op it waits for (its unit's all-gather)
};

struct Zero3Plan {
  std::vector<StreamOp> ops;
  std::vector<DeviceTask> tasks;
};

// `prefetch` (training.overlap "forward", FSDP's forward_prefetch): a unit's forward
// all-gather may start when the previous unit's forward starts (one unit ahead); without
// it, when the previous unit's forward has ended. Backward always prefetches one unit
// ahead (FSDP's default BACKWARD_PRE): the next unit's all-gather is issued before the
// current unit's reduce-scatter.
Zero3Plan plan_zero3(const std::vector<Layer>& layers, const std::vector<Bucket>& buckets, bool prefetch);

// The device's start and end times (seconds from the iteration's start, durations divided
// by `speed`), computed as far as the stream ops that have ended allow: task t starts at
// max(end of t-1, end of its op). `op_end[j]` < 0: op j has not ended.
class DeviceTimeline {
public:
  DeviceTimeline(const std::vector<DeviceTask>& tasks, double speed) : tasks_(tasks), speed_(speed) {}
  // Start (or end) of task t; every op it depends on, directly or through earlier tasks,
  // must have ended.
  double at(int task, bool end, const std::vector<double>& op_end);
  double start(int task) const { return start_[static_cast<size_t>(task)]; }
  double end(int task) const { return end_[static_cast<size_t>(task)]; }

private:
  const std::vector<DeviceTask>& tasks_;
  double speed_;
  std::vector<double> start_, end_;  // of the tasks computed so far
};

}  // namespace collsim
