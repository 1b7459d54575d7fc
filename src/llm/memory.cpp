#include "llm/memory.hpp"

#include <algorithm>

namespace collsim::llm {
namespace {

// Mixed-precision Adam, bytes per parameter (Rajbhandari et al. 2020 sec. 3.1: "2Ψ + 2Ψ +
// KΨ" with K = 12).
constexpr double kWeightBytes = 2, kGradientBytes = 2, kOptimizerBytes = 12;

double d(uint64_t value) { return static_cast<double>(value); }

struct StageParameters {
  double replicated = 0;  // on one GPU, sharded by ZeRO over the whole data dimension
  double experts = 0;     // on one GPU, sharded by ZeRO over data / expert (the experts' replicas)
};

// The stage's blocks split over tensor (their experts over tensor x expert too), the
// vocabulary-parallel embedding on the first stage, the output layer on the last; with
// tied embeddings and several stages the last keeps a copy of the embedding for its
// logits (Megatron, Shoeybi et al. 2019 sec. 3; Narayanan et al. SC'21).
StageParameters stage_parameters(const TransformerModel& m, const Layout& layout, int stage) {
  const double blocks = stage_layers(m, layout.pipeline).at(static_cast<size_t>(stage));
  const double t = layout.tensor, expert_params = d(block_expert_parameters(m));
  StageParameters p;
  p.replicated = blocks * (d(block_parameters(m)) - expert_params) / t;
  p.experts = blocks * expert_params / (t * layout.expert);
  const bool first = stage == 0, last = stage == layout.pipeline - 1;
  if (first) p.replicated += d(embedding_parameters(m)) / t;
  if (last) p.replicated += d(output_parameters(m)) / t;
  if (last && !first && m.tied_embeddings) p.replicated += d(m.vocab) * d(m.hidden) / t;
  return p;
}

MemoryPerGpu stage_memory(const TransformerModel& m, const Layout& layout, int stage) {
  const StageParameters p = stage_parameters(m, layout, stage);
  const double data = layout.data, expert_data = static_cast<double>(layout.data) / layout.expert;
  // ZeRO: stage 1 shards the optimizer states, 2 the gradients too, 3 the weights too.
  const auto sharded = [&](int from_stage) {
    return layout.zero_stage >= from_stage ? p.replicated / data + p.experts / expert_data : p.replicated + p.experts;
  };
  MemoryPerGpu memory;
  memory.stage = stage;
  memory.weights = kWeightBytes * sharded(3);
  memory.gradients = kGradientBytes * sharded(2);
  memory.optimizer = kOptimizerBytes * sharded(1);
  const double chunk_blocks =
      static_cast<double>(stage_layers(m, layout.pipeline).at(static_cast<size_t>(stage))) / layout.virtual_stages;
  const int in_flight = chunks_in_flight(layout, stage, micro_batches(m, layout));
  memory.activations = in_flight * chunk_blocks * layer_costs(m, layout).activation_bytes;
  if (layout.recompute == Recompute::full) {  // backward rebuilds one block's activations at a time
    Layout kept = layout;
    kept.recompute = Recompute::none;
    memory.activations += layer_costs(m, kept).activation_bytes;
  }
  return memory;
}

}  // namespace

std::vector<int> stage_layers(const TransformerModel& m, int pipeline) {
  std::vector<int> layers(static_cast<size_t>(pipeline), m.layers / pipeline);
  int extra = m.layers % pipeline;
  for (int stage = 1; stage + 1 < pipeline && extra > 0; ++stage, --extra) ++layers[static_cast<size_t>(stage)];
  for (int stage : {0, pipeline - 1})
    if (extra > 0) ++layers[static_cast<size_t>(stage)], --extra;
  return layers;
}

int chunks_in_flight(const Layout& layout, int stage, int micro_batches) {
  const int p = layout.pipeline, v = layout.virtual_stages;
  if (v <= 1) return std::min(p - stage, micro_batches);
  const int passes = v * micro_batches;
  if (micro_batches == p) return passes;  // schedules.py: all_warmup_microbatches
  return std::min((p - stage - 1) * 2 + (v - 1) * p + 1, passes);
}

int micro_batches(const TransformerModel& m, const Layout& layout) {
  return m.global_batch / (layout.data * m.micro_batch);
}

double parameters_on_gpu(const TransformerModel& m, const Layout& layout, int stage) {
  const StageParameters p = stage_parameters(m, layout, stage);
  return p.replicated + p.experts;
}

MemoryPerGpu memory_per_gpu(const TransformerModel& m, const Layout& layout) {
  MemoryPerGpu fullest;
  for (int stage = 0; stage < layout.pipeline; ++stage) {
    const MemoryPerGpu memory = stage_memory(m, layout, stage);
    if (stage == 0 || memory.total() > fullest.total()) fullest = memory;
  }
  return fullest;
}

}  // namespace collsim::llm
