#include "training/iteration.hpp"

#include <algorithm>
#include <cmath>

namespace collsim {

uint64_t total_parameters(const std::vector<Layer>& layers) {
  uint64_t total = 0;
  for (const Layer& layer : layers) total += layer.parameters;
  return total;
}

PassSeconds pass_seconds(const std::vector<Layer>& layers) {
  PassSeconds total;
  for (const Layer& layer : layers) {
    total.forward += layer.forward;
    total.backward += layer.backward;
  }
  return total;
}

std::vector<LayerInterval> layer_timeline(const std::vector<Layer>& layers, double forward_start, double backward_start,
                                          double factor) {
  std::vector<LayerInterval> timeline;
  double done = 0;
  for (size_t l = 0; l < layers.size(); ++l) {
    const double start = forward_start + done / factor;
    done += layers[l].forward;
    const double end = l + 1 == layers.size() ? backward_start : forward_start + done / factor;
    timeline.push_back({static_cast<int>(l), true, start, end});
  }
  done = 0;
  for (size_t l = layers.size(); l-- > 0;) {
    const double start = backward_start + done / factor;
    done += layers[l].backward;
    timeline.push_back({static_cast<int>(l), false, start, backward_start + done / factor});
  }
  return timeline;
}

const NamedEnum<Sharding>& sharding_names() {
  static const NamedEnum<Sharding> table{"sharding", {{Sharding::none, "none"}, {Sharding::zero2, "zero2"}, {Sharding::zero3, "zero3"}}};
  return table;
}

const NamedEnum<Overlap>& overlap_names() {
  static const NamedEnum<Overlap> table{"overlap", {{Overlap::backward, "backward"}, {Overlap::forward, "forward"}}};
  return table;
}

double memory_per_worker(uint64_t parameters, double bytes_per_parameter, Sharding sharding, int workers) {
  constexpr double optimizer_bytes = 12;  // Adam: fp32 master weights, momentum, variance
  const double n = static_cast<double>(parameters), s = bytes_per_parameter;
  if (sharding == Sharding::zero2) return s * n + (s + optimizer_bytes) * n / workers;
  if (sharding == Sharding::zero3) return (2 * s + optimizer_bytes) * n / workers;
  return (2 * s + optimizer_bytes) * n;
}

std::vector<Bucket> plan_buckets(const std::vector<Layer>& layers, double bytes_per_parameter, double cap_bytes) {
  std::vector<Bucket> buckets;
  const int count = static_cast<int>(layers.size());
  double backward_done = 0;
  uint64_t offset_end = total_parameters(layers);  // the open bucket ends here
  Bucket open;
  bool has_open = false;
  for (int l = count - 1; l >= 0; --l) {
    const Layer& layer = layers[static_cast<size_t>(l)];
    backward_done += layer.backward;
    if (!has_open) {
      open = Bucket{l, l, 0, 0, 0};
      has_open = true;
    }
    open.first = l;
    open.parameters += layer.parameters;
    open.ready = backward_done;
    const bool full = cap_bytes > 0 && static_cast<double>(open.parameters) * bytes_per_parameter >= cap_bytes;
    if (full || l == 0) {
      open.offset = offset_end - open.parameters;
      offset_end = open.offset;
      buckets.push_back(open);
      has_open = false;
    }
  }
  return buckets;
}

std::vector<Bucket> plan_fusion(const std::vector<Layer>& layers, double bytes_per_parameter, double buffer_bytes,
                                double cycle) {
  std::vector<Bucket> buckets;
  uint64_t offset_end = total_parameters(layers);
  double backward_done = 0;
  double tick = 0;
  Bucket open;
  bool has_open = false;
  auto close = [&] {
    open.offset = offset_end - open.parameters;
    offset_end = open.offset;
    buckets.push_back(open);
    has_open = false;
  };
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) {
    const Layer& layer = layers[static_cast<size_t>(l)];
    backward_done += layer.backward;
    // the first tick at which this gradient exists (a tick at its end, to rounding, takes it)
    const double ready_tick = std::max(cycle, std::ceil(backward_done / cycle * (1 - 1e-12)) * cycle);
    const double bytes = static_cast<double>(layer.parameters) * bytes_per_parameter;
    if (has_open && (ready_tick > tick || static_cast<double>(open.parameters) * bytes_per_parameter + bytes > buffer_bytes))
      close();
    tick = ready_tick;
    if (!has_open) {
      open = Bucket{l, l, 0, 0, tick};
      has_open = true;
    }
    open.first = l;
    open.parameters += layer.parameters;
  }
  if (has_open) close();
  return buckets;
}

std::vector<BucketSlice> slice_buckets(const std::vector<Bucket>& buckets, const std::vector<CarriedMap>& maps) {
  std::vector<BucketSlice> slices;
  for (size_t b = 0; b < buckets.size(); ++b) {
    size_t before = 0;  // the carried elements of the buckets earlier in the vector
    for (size_t other = 0; other < buckets.size(); ++other)
      if (buckets[other].offset < buckets[b].offset) before += maps[other].carried;
    slices.push_back({buckets[b], before, maps[b].carried, maps[b]});
  }
  return slices;
}

std::vector<uint64_t> layer_parameters(const std::vector<Layer>& layers, const Bucket& bucket) {
  std::vector<uint64_t> parameters;
  for (int l = bucket.first; l <= bucket.last; ++l) parameters.push_back(layers[static_cast<size_t>(l)].parameters);
  return parameters;
}

}  // namespace collsim
