#pragma once
// Memory per GPU of a layout (issue 52 item 4): the model states of mixed-precision Adam,
// 16 bytes per parameter (Rajbhandari et al. 2020, ZeRO, sec. 3.1: 2 for the 16-bit
// weights, 2 for their gradients, 12 for the optimizer's fp32 weights, momentum and
// variance), which ZeRO stages 1, 2 and 3 shard over the data dimension (optimizer; and
// gradients; and weights); and the activations that the 1F1B schedule keeps: stage i holds
// min(pipeline - i, micro-batches) micro-batches in flight (Narayanan et al. SC'21 sec.
// 2.2.1), each its blocks' activations (llm/layer_costs.hpp). The fullest stage decides.
// docs/training.md#memory-per-gpu.
#include <vector>

#include "llm/layer_costs.hpp"

namespace collsim::llm {

struct MemoryPerGpu {
  double weights = 0;      // bytes of 16-bit weights
  double gradients = 0;    // bytes of 16-bit gradients
  double optimizer = 0;    // bytes of fp32 weights, momentum and variance
  double activations = 0;  // bytes kept for backward (and a full recomputation's working block)
  int stage = 0;           // the pipeline stage these figures are of (the fullest)
  double total() const { return weights + gradients + optimizer + activations; }
};

// Blocks of each pipeline stage: L / pipeline each, the remainder on the middle stages first
// (the first stage also holds the embedding, the last the output layer; Llama 3 (sec. 3.3.2)
// gives its first and last stages one block fewer the same way).
std::vector<int> stage_layers(const TransformerModel& model, int pipeline);

// Micro-batches each data-parallel replica runs per step: global_batch / (data x micro_batch).
int micro_batches(const TransformerModel& model, const Layout& layout);

// The parameters one GPU of stage `stage` holds (its blocks / tensor, experts / expert too).
double parameters_on_gpu(const TransformerModel& model, const Layout& layout, int stage);

// The fullest stage's memory per GPU.
MemoryPerGpu memory_per_gpu(const TransformerModel& model, const Layout& layout);

}  // namespace collsim::llm
