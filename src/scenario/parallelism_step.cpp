#include "scenario/parallelism_step.hpp"

#include <fmt/format.h>

#include "util/suggest.hpp"
#include "scenario/json_fields.hpp"
#include "util/errors.hpp"

namespace collsim {

using json = nlohmann::json;

namespace {

// The model: a preset ("model": "llama3-8b") and any of its sizes changed.
llm::TransformerModel read_model(const json& object) {
  if (!object.contains("model"))
    throw InputError(fmt::format("parallelism.step.model: missing; allowed: {}", join(llm::transformer_preset_names())));
  llm::TransformerModel m = llm::transformer_preset(get_string(object["model"], "parallelism.step.model"), "parallelism.step.model");
  const std::pair<const char*, int64_t*> wide[]{{"hidden", &m.hidden}, {"ffn_hidden", &m.ffn_hidden}, {"vocab", &m.vocab}};
  for (const auto& [key, field] : wide)
    if (object.contains(key)) *field = get_integer(object[key], fmt::format("parallelism.step.{}", key), 1, int64_t{1} << 40);
  const std::pair<const char*, int*> narrow[]{{"layers", &m.layers},           {"heads", &m.heads},
                                              {"kv_heads", &m.kv_heads},       {"sequence", &m.sequence},
                                              {"micro_batch", &m.micro_batch}, {"global_batch", &m.global_batch},
                                              {"experts", &m.experts},         {"top_k", &m.top_k}};
  for (const auto& [key, field] : narrow)
    if (object.contains(key)) *field = static_cast<int>(get_integer(object[key], fmt::format("parallelism.step.{}", key), 1, 1 << 24));
  llm::check_transformer(m, "parallelism.step");
  return m;
}

// What Megatron refuses of a layout for this model, one line each.
void check_fit(const llm::TransformerModel& m, const llm::Layout& layout) {
  if (m.heads % layout.tensor != 0)
    throw InputError(fmt::format("parallelism.tensor: {} does not divide the model's {} heads (Megatron splits heads "
                                 "over the tensor group)", layout.tensor, m.heads));
  // Megatron-core's TransformerConfig: "num_query_groups must be divisible by tensor_model_parallel_size"
  // (each tensor rank holds whole key/value heads, as the layout search requires too).
  if (m.kv_heads % layout.tensor != 0)
    throw InputError(fmt::format("parallelism.tensor: {} does not divide the model's {} key/value heads (kv_heads: "
                                 "Megatron gives each tensor rank whole key/value heads)", layout.tensor, m.kv_heads));
  if (m.layers < layout.pipeline)
    throw InputError(fmt::format("parallelism.pipeline: {} stages for {} layers; allowed: at most one stage per layer",
                                 layout.pipeline, m.layers));
  if (m.global_batch % (m.micro_batch * layout.data) != 0)
    throw InputError(fmt::format("parallelism.step.global_batch: {} is not a multiple of micro_batch {} x data {}",
                                 m.global_batch, m.micro_batch, layout.data));
  if (layout.expert > 1 && (m.experts <= 1 || m.experts % layout.expert != 0))
    throw InputError(fmt::format("parallelism.expert: {} expert groups need a model whose experts ({}) it divides",
                                 layout.expert, m.experts));
}

// Megatron's interleaved schedule: every virtual stage the same blocks, and whole groups of
// P micro-batches (megatron/training/arguments.py and schedules.py's checks).
void check_interleaving(const llm::TransformerModel& m, const llm::Layout& layout, int chunks) {
  if (chunks == 1) return;
  if (layout.pipeline < 2)
    throw InputError(fmt::format("parallelism.step.virtual_stages: {} model chunks need pipeline parallelism; allowed "
                                 "with parallelism.pipeline 2 or more (pipeline is {})", chunks, layout.pipeline));
  if (m.layers % (layout.pipeline * chunks) != 0)
    throw InputError(fmt::format("parallelism.step.virtual_stages: {} layers do not split into pipeline {} x {} virtual "
                                 "stages of equal blocks; allowed: a v for which pipeline x v divides the layers",
                                 m.layers, layout.pipeline, chunks));
  const int64_t micro_batches = m.global_batch / (m.micro_batch * layout.data);
  if (micro_batches % layout.pipeline != 0)
    throw InputError(fmt::format("parallelism.step.virtual_stages: the interleaved schedule runs micro-batches in groups "
                                 "of pipeline {}, and a replica has {} (global_batch / (micro_batch x data)); make it a "
                                 "multiple", layout.pipeline, micro_batches));
}

}  // namespace

StepSpec parse_step(const json& object, const llm::Layout& layout) {
  if (!object.is_object())
    throw InputError("parallelism.step: must be an object ({\"model\": \"llama3-8b\", \"gpu\": \"h100\", \"efficiency\": 0.4})");
  check_keys(object, "parallelism.step",
             {"model", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "sequence", "micro_batch",
              "global_batch", "experts", "top_k", "gpu", "efficiency", "sequence_parallel", "recompute", "zero",
              "bucket_parameters", "algorithms", "virtual_stages", "pipeline_scatter_gather"});
  StepSpec step;
  step.given = true;
  step.model = read_model(object);
  check_fit(step.model, layout);
  step.gpu = object.contains("gpu") ? get_string(object["gpu"], "parallelism.step.gpu") : "h100";
  step.peak_flops = llm::gpu_compute(step.gpu, "parallelism.step.gpu").peak_bf16_flops;
  if (!object.contains("efficiency"))
    throw InputError("parallelism.step.efficiency: missing; state the fraction of the GPU's peak a block's FLOPs run at "
                     "(0 to 1, e.g. 0.5): collsim does not guess it");
  if (!object["efficiency"].is_number() || object["efficiency"].get<double>() <= 0 || object["efficiency"].get<double>() > 1)
    throw InputError("parallelism.step.efficiency: must be a number above 0 and at most 1");
  step.efficiency = object["efficiency"].get<double>();
  if (object.contains("sequence_parallel")) {
    if (!object["sequence_parallel"].is_boolean()) throw InputError("parallelism.step.sequence_parallel: must be true or false");
    step.sequence_parallel = object["sequence_parallel"].get<bool>();
  }
  if (object.contains("pipeline_scatter_gather")) {
    if (!object["pipeline_scatter_gather"].is_boolean())
      throw InputError("parallelism.step.pipeline_scatter_gather: must be true or false");
    step.pipeline_scatter_gather = object["pipeline_scatter_gather"].get<bool>();
  }
  if (object.contains("recompute"))
    step.recompute = llm::parse_recompute(get_string(object["recompute"], "parallelism.step.recompute"), "parallelism.step.recompute");
  if (object.contains("virtual_stages")) {
    step.virtual_stages = static_cast<int>(get_integer(object["virtual_stages"], "parallelism.step.virtual_stages", 1, 1024));
    check_interleaving(step.model, layout, step.virtual_stages);
  }
  if (object.contains("zero")) step.zero = static_cast<int>(get_integer(object["zero"], "parallelism.step.zero", 0, 1));
  if (object.contains("bucket_parameters"))
    step.bucket_parameters = static_cast<double>(get_integer(object["bucket_parameters"], "parallelism.step.bucket_parameters", 1, 1LL << 40));
  if (object.contains("algorithms")) {
    const json& algorithms = object["algorithms"];
    if (!algorithms.is_object()) throw InputError("parallelism.step.algorithms: must be an object ({\"tensor\": \"ring\"})");
    check_keys(algorithms, "parallelism.step.algorithms", {"tensor", "data", "expert"});
    const std::pair<const char*, std::string*> names[]{
        {"tensor", &step.tensor_algorithm}, {"data", &step.data_algorithm}, {"expert", &step.expert_algorithm}};
    for (const auto& [key, field] : names)
      if (algorithms.contains(key)) *field = get_string(algorithms[key], fmt::format("parallelism.step.algorithms.{}", key));
  }
  return step;
}

json step_to_json(const StepSpec& step) {
  const llm::TransformerModel& m = step.model;
  return {{"model", m.name}, {"layers", m.layers}, {"hidden", m.hidden}, {"ffn_hidden", m.ffn_hidden},
          {"heads", m.heads}, {"kv_heads", m.kv_heads}, {"vocab", m.vocab}, {"sequence", m.sequence},
          {"micro_batch", m.micro_batch}, {"global_batch", m.global_batch}, {"experts", m.experts}, {"top_k", m.top_k},
          {"gpu", step.gpu}, {"efficiency", step.efficiency}, {"sequence_parallel", step.sequence_parallel},
          {"recompute", llm::recompute_name(step.recompute)}, {"virtual_stages", step.virtual_stages}, {"zero", step.zero},
          {"bucket_parameters", step.bucket_parameters}, {"pipeline_scatter_gather", step.pipeline_scatter_gather},
          {"algorithms", {{"tensor", step.tensor_algorithm}, {"data", step.data_algorithm}, {"expert", step.expert_algorithm}}}};
}

}  // namespace collsim
