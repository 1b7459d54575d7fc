#pragma once
// The layouts of a GPU count (issue 52 item 4): every tensor x pipeline x data (x expert)
// that divides it, with the memory per GPU of each and whether it fits the GPU's memory.
// docs/training.md#layout-search.
#include <optional>
#include <string>
#include <vector>

#include "llm/memory.hpp"

namespace collsim::llm {

struct LayoutRules {
  int gpus = 0;           // GPUs in all
  int gpus_per_node = 8;  // tensor groups stay inside a node (Megatron's rule): tensor divides this
  double memory_bytes = 0;  // each GPU's memory
  int zero_stage = 0;
  bool sequence_parallel = false;            // with tensor > 1
  std::optional<Recompute> recompute;        // unset: the least recomputation that fits
};

struct LayoutCandidate {
  Layout layout;
  MemoryPerGpu memory;
  bool fits = false;
};

// Every layout the rules allow, in order of tensor, pipeline, expert; those that cannot fit
// even with full recomputation are kept with fits = false (their memory that of the last
// recomputation tried). Tensor divides gpus_per_node, the heads and the key/value heads;
// pipeline is at most the layers; the data size divides the global batch in whole
// micro-batches; expert divides the data size and the experts (1 for a dense model).
std::vector<LayoutCandidate> enumerate_layouts(const TransformerModel& model, const LayoutRules& rules);

// "TP8 PP4 DP32" (and " EP8" when expert > 1).
std::string layout_name(const Layout& layout);

}  // namespace collsim::llm
