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
  int max_virtual_stages = 0;  // model chunks per stage tried, at most (0: every count Megatron allows; 1: plain 1F1B)
};

struct LayoutCandidate {
  Layout layout;
  MemoryPerGpu memory;
  bool fits = false;
};

// Whether Megatron's interleaved schedule runs `virtual_stages` chunks per stage of the
// layout: 1 always; more with 2 or more stages, the layers split into pipeline x v equal
// virtual stages, and a replica's micro-batches a multiple of pipeline (megatron/training/
// arguments.py and schedules.py's checks).
bool interleaving_allowed(const TransformerModel& model, const Layout& layout, int virtual_stages);

// Every layout the rules allow, in order of tensor, pipeline, expert, virtual stages; those that cannot fit
// even with full recomputation are kept with fits = false (their memory that of the last
// recomputation tried). Tensor divides gpus_per_node, the heads and the key/value heads;
// pipeline is at most the layers; the data size divides the global batch in whole
// micro-batches; expert divides the data size and the experts (1 for a dense model); each
// interleaving Megatron allows (up to max_virtual_stages) is a layout of its own.
std::vector<LayoutCandidate> enumerate_layouts(const TransformerModel& model, const LayoutRules& rules);

// "TP8 PP4 DP32" (and " VP3" with 3 virtual stages, " EP8" when expert > 1).
std::string layout_name(const Layout& layout);

}  // namespace collsim::llm
