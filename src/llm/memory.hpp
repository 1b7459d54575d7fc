#pragma once
// Memory per GPU of a layout (issue 52 item 4): the model states of mixed-precision Adam,
// 16 bytes per parameter (Rajbhandari et al. 2020, ZeRO, sec. 3.1: 2 for the 16-bit
// weights, 2 for their gradients, 12 for the optimizer's fp32 weights, momentum and
// variance), which ZeRO stages 1, 2 and 3 shard over the data dimension (optimizer; and
// gradients; and weights); and the activations that the 1F1B schedule keeps: stage i holds
// min(pipeline - i, micro-batches) micro-batches in flight (Narayanan et al. SC'21 sec.
// 2.2.1), each its blocks' activations (llm/layer_costs.hpp), more with the interleaved
// schedule (chunks_in_flight). The fullest stage decides. docs/training.md#memory-per-gpu.
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

// The passes (a micro-batch through one model chunk) whose activations stage `stage` holds
// at once, at most, in Megatron-LM's schedules (megatron/core/pipeline_parallel/schedules.py):
// the warm-up forwards and the one forward that runs before the first backward. Without
// interleaving that is min(P - s - 1, m) + 1, at most m: min(P - s, m). Interleaved over
// v = layout.virtual_stages chunks it is (P - s - 1) x 2 + (v - 1) x P + 1, at most all v m
// (and all v m when m = P: Megatron then runs every forward first). Each pass holds 1/v of
// the stage's blocks, so stage 0 keeps 1 + (P - 1) / (P v) times plain 1F1B's activations
// when m > P (Megatron's theoretical_memory_usage.py: interleaved_schedule_memory_penalty).
int chunks_in_flight(const Layout& layout, int stage, int micro_batches);

// The parameters one GPU of stage `stage` holds (its blocks / tensor, experts / expert too).
double parameters_on_gpu(const TransformerModel& model, const Layout& layout, int stage);

// The fullest stage's memory per GPU.
MemoryPerGpu memory_per_gpu(const TransformerModel& model, const Layout& layout);

}  // namespace collsim::llm
