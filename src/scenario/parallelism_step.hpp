#pragma once
// parallelism.step: one training step of a transformer (src/llm/: the model, its costs per
// block, the GPU's peak) on the layout, as Megatron-LM runs it (docs/parallelism.md#the-llm-step).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "llm/gpu_compute.hpp"
#include "llm/layer_costs.hpp"
#include "llm/transformer.hpp"

namespace collsim {

struct StepSpec {
  bool given = false;
  llm::TransformerModel model;  // a preset, with the scenario's changes
  std::string gpu;              // llm/gpu_compute.hpp's name ("h100")
  double peak_flops = 0;        // the GPU's dense bf16 peak
  double efficiency = 0;        // the fraction of the peak a block's FLOPs run at: stated, never fitted
  bool sequence_parallel = false;
  llm::Recompute recompute = llm::Recompute::none;
  // model chunks per pipeline stage (Megatron's interleaved schedule, its
  // --num-virtual-stages-per-pipeline-rank): 1 is plain 1F1B
  int virtual_stages = 1;
  // Megatron-LM's scatter/gather of the pipeline's tensors (llm::Layout): off, as Megatron-core
  bool pipeline_scatter_gather = false;
  // 0: every gradient bucket allreduced; 1: Megatron's distributed optimizer (ZeRO-1):
  // each bucket reduce-scattered, and the updated parameters all-gathered after the step
  int zero = 0;
  double bucket_parameters = 40e6;  // parameters per gradient bucket (Megatron's default, docs/parallelism.md)
  // each communicator's algorithm: "auto" (by the cost model) or a name
  std::string tensor_algorithm = "auto", data_algorithm = "auto", expert_algorithm = "pairwise";
};

// Reads parallelism.step against the layout's sizes (tensor, pipeline, data, expert).
StepSpec parse_step(const nlohmann::json& object, const llm::Layout& layout);
nlohmann::json step_to_json(const StepSpec& step);

}  // namespace collsim
