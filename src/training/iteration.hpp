#pragma once
// One training iteration as data-parallel frameworks run it (PyTorch DDP): forward through
// the layers, then backward in reverse order; gradients fill buckets in backward order,
// and each bucket's allreduce starts as soon as backward has produced its last gradient,
// on a communication stream that runs one collective at a time, in bucket order, while
// the rest of backward goes on. One bucket holding every gradient means no overlap.
#include <cstdint>
#include <string>
#include <vector>

#include "comm/buffer.hpp"
#include "util/named_enum.hpp"

namespace collsim {

struct Layer {
  std::string name;
  uint64_t parameters = 0;
  double forward = 0;   // seconds on one worker at nominal speed
  double backward = 0;
  // Its tensors' parameters, in order (a preset's; they add up to `parameters`); empty: the
  // layer is one tensor. What parameter servers place whole (training/variable_placement.hpp).
  std::vector<uint64_t> variables;
};

// Gradients of layers `first`..`last` (forward indices, first <= last), contiguous in the
// gradient vector, which is laid out in forward order.
struct Bucket {
  int first = 0, last = 0;
  uint64_t parameters = 0;
  uint64_t offset = 0;   // parameters before this bucket in the gradient vector
  double ready = 0;      // seconds into backward when its last gradient exists
};

// DDP's rule: walk the layers in backward order and close a bucket once it holds at least
// `cap_bytes` (a layer is never split, so a layer larger than the cap is a bucket of its
// own). cap_bytes <= 0: one bucket of every layer. Buckets come in backward order.
std::vector<Bucket> plan_buckets(const std::vector<Layer>& layers, double bytes_per_parameter, double cap_bytes);

// Horovod's fusion (Sergeev & Del Balso 2018): a background loop wakes every `cycle`
// seconds (counted from the start of backward), takes the gradients ready by then and not
// yet sent, in backward order, and fuses them into buffers of at most `buffer_bytes` (a
// larger layer goes alone); each fused buffer is one collective, ready at that tick. The
// plan is fixed by the ticks: a tick does not wait for the stream to be free.
std::vector<Bucket> plan_fusion(const std::vector<Layer>& layers, double bytes_per_parameter, double buffer_bytes,
                                double cycle);

uint64_t total_parameters(const std::vector<Layer>& layers);

// One iteration's forward and backward through every layer, seconds at nominal speed.
struct PassSeconds {
  double forward = 0, backward = 0;
};
PassSeconds pass_seconds(const std::vector<Layer>& layers);

// When the device ran each layer of an iteration, at `factor` of its nominal speed: forward
// layers in order from `forward_start` (the last one ending at `backward_start`, the end of
// the forward execution), then backward layers in reverse order from `backward_start`, the
// times at which the stream sees each bucket ready.
struct LayerInterval {
  int layer = 0;
  bool forward = true;
  double start = 0, end = 0;
};
std::vector<LayerInterval> layer_timeline(const std::vector<Layer>& layers, double forward_start, double backward_start,
                                          double factor);

// Sharded data parallel (ZeRO, Rajbhandari et al. 2020): "zero2" shards gradients and
// optimizer states; each bucket is reduce-scattered during backward and, after the step,
// the updated parameters are all-gathered bucket by bucket. "zero3" shards the parameters
// too: they are all-gathered bucket by bucket before forward and again before backward
// (training/zero3.hpp).
enum class Sharding { none, zero2, zero3 };
const NamedEnum<Sharding>& sharding_names();

// What the next iteration's forward waits for: "backward" (DDP) every bucket of the
// previous iteration; "forward" only what each layer needs, prefetched one unit ahead
// (with zero3, its parameters' all-gather).
enum class Overlap { backward, forward };
const NamedEnum<Overlap>& overlap_names();

// Bytes one worker holds for the model (activations left out): parameters and gradients
// of `bytes_per_parameter` each, and Adam's optimizer states (fp32 master copy, momentum,
// variance: 12 bytes per parameter), divided by `workers` where sharded:
// none (2s + 12) P, zero2 s P + (s + 12) P / workers, zero3 (2s + 12) P / workers.
double memory_per_worker(uint64_t parameters, double bytes_per_parameter, Sharding sharding, int workers);

// Where each bucket lies in a rank's carried elements (docs: logical vs carried size):
// bucket b's carried elements are laid out by maps[b] (its parameters among its carried
// elements, layer by layer), the buckets one after the other in the gradient vector's order
// (forward order of their layers).
struct BucketSlice {
  Bucket bucket;
  size_t offset = 0, count = 0;  // carried elements
  CarriedMap map;                // the bucket's parameters among its carried elements
};
std::vector<BucketSlice> slice_buckets(const std::vector<Bucket>& buckets, const std::vector<CarriedMap>& maps);

// The parameters of each layer of a bucket, in forward (vector) order.
std::vector<uint64_t> layer_parameters(const std::vector<Layer>& layers, const Bucket& bucket);

}  // namespace collsim
