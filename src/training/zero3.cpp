#include "training/zero3.hpp"

#include <algorithm>
#include <stdexcept>

namespace collsim {

Zero3Plan plan_zero3(const std::vector<Layer>& layers, const std::vector<Bucket>& buckets, bool prefetch) {
  Zero3Plan plan;
  const int count = static_cast<int>(layers.size()), units = static_cast<int>(buckets.size());
  auto forward_task = [](int layer) { return layer; };
  auto backward_task = [count](int layer) { return 2 * count - 1 - layer; };
  std::vector<int> unit_of(static_cast<size_t>(count));
  for (int b = 0; b < units; ++b)
    for (int l = buckets[static_cast<size_t>(b)].first; l <= buckets[static_cast<size_t>(b)].last; ++l)
      unit_of[static_cast<size_t>(l)] = b;
  std::vector<int> forward_gather(static_cast<size_t>(units)), backward_gather(static_cast<size_t>(units));
  // Forward: units in forward order (the last bucket holds layer 0).
  for (int b = units - 1; b >= 0; --b) {
    StreamOp op{StreamOp::Kind::gather, b, -1, false};
    if (b + 1 < units) {
      const Bucket& previous = buckets[static_cast<size_t>(b + 1)];
      op.task = forward_task(prefetch ? previous.first : previous.last);
      op.gate_on_end = !prefetch;
    }
    forward_gather[static_cast<size_t>(b)] = static_cast<int>(plan.ops.size());
    plan.ops.push_back(op);
  }
  // Backward: the first unit's parameters once forward is over, then for each unit the
  // next unit's all-gather (when this unit's backward starts) and this unit's
  // reduce-scatter (when its backward is done).
  backward_gather[0] = static_cast<int>(plan.ops.size());
  plan.ops.push_back({StreamOp::Kind::gather, 0, forward_task(count - 1), true});
  for (int b = 0; b < units; ++b) {
    const Bucket& unit = buckets[static_cast<size_t>(b)];
    if (b + 1 < units) {
      backward_gather[static_cast<size_t>(b + 1)] = static_cast<int>(plan.ops.size());
      plan.ops.push_back({StreamOp::Kind::gather, b + 1, backward_task(unit.last), false});
    }
    plan.ops.push_back({StreamOp::Kind::reduce_scatter, b, backward_task(unit.first), true});
  }
  for (int l = 0; l < count; ++l)
    plan.tasks.push_back({true, l, layers[static_cast<size_t>(l)].forward, forward_gather[static_cast<size_t>(unit_of[static_cast<size_t>(l)])]});
  for (int l = count - 1; l >= 0; --l)
    plan.tasks.push_back({false, l, layers[static_cast<size_t>(l)].backward, backward_gather[static_cast<size_t>(unit_of[static_cast<size_t>(l)])]});
  return plan;
}

double DeviceTimeline::at(int task, bool end, const std::vector<double>& op_end) {
  while (static_cast<int>(start_.size()) <= task) {
    const size_t t = start_.size();
    const DeviceTask& next = tasks_[t];
    const double needed = op_end[static_cast<size_t>(next.needs)];
    if (needed < 0) throw std::logic_error("zero3: a device task depends on a later stream op");
    const double start = std::max(t == 0 ? 0.0 : end_.back(), needed);
    start_.push_back(start);
    end_.push_back(start + next.duration / speed_);
  }
  return end ? end_[static_cast<size_t>(task)] : start_[static_cast<size_t>(task)];
}

}  // namespace collsim
