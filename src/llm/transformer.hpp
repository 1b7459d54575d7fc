#pragma once
// A decoder-only transformer as a parallel training step sees it (issue 52): its shape, the
// named presets with the parameter counts their papers publish, and its parameters counted
// from the shape. What one layer costs (FLOPs, activations, the tensor-parallel
// collectives) is in llm/layer_costs.hpp; memory per GPU in llm/memory.hpp; a GPU's peak
// compute and memory in llm/gpu_compute.hpp. docs/training.md#llm-model-library.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::llm {

// The MLP of a block: GPT's two matrices with a GeLU between (h -> f -> h), or Llama's
// SwiGLU with three (gate and up h -> f, down f -> h; Shazeer 2020).
enum class Mlp { gelu, swiglu };

struct TransformerModel {
  std::string name;
  int layers = 0;          // L: transformer blocks
  int64_t hidden = 0;      // h: d_model
  int64_t ffn_hidden = 0;  // f: the MLP's inner width (of one expert, for a mixture of experts)
  int heads = 0;           // a: attention heads; head size h / a
  int kv_heads = 0;        // key and value heads (grouped-query attention); = heads for multi-head
  int64_t vocab = 0;       // V: vocabulary (embedding rows)
  int sequence = 0;        // s: tokens per sample in training
  Mlp mlp = Mlp::gelu;
  bool biases = false;             // linear layers with biases and LayerNorm (weight, bias); else RMSNorm (weight)
  bool learned_positions = false;  // a position table of `sequence` rows (GPT); rotary embeddings have none
  bool tied_embeddings = false;    // the output projection is the token embedding's transpose
  bool dropout = false;            // dropout after attention and MLP: its 1-byte masks are kept for backward
  int experts = 1;                 // experts of each MLP (1: dense); every block is a mixture when > 1
  int top_k = 1;                   // experts each token is routed to
  int micro_batch = 1;             // b: samples per micro-batch
  int global_batch = 1;            // B: samples per step, over every data-parallel replica
  uint64_t published_parameters = 0;  // the count the source prints (as printed: 175.0B is 175,000,000,000)
  std::string source;              // the paper and table the shape comes from

  int64_t head_size() const { return hidden / heads; }
  int64_t kv_width() const { return head_size() * kv_heads; }  // width of K (and of V)
};

// Parameters, counted from the shape.
uint64_t block_parameters(const TransformerModel& model);       // one transformer block, all its experts
uint64_t block_expert_parameters(const TransformerModel& model);  // of those, its experts' MLPs (0 when dense)
uint64_t embedding_parameters(const TransformerModel& model);   // token (and position) embeddings
uint64_t output_parameters(const TransformerModel& model);      // final norm and, untied, the output projection
uint64_t total_parameters(const TransformerModel& model);
// Parameters a token goes through (a mixture of experts uses top_k of its experts).
uint64_t active_parameters(const TransformerModel& model);
// The block's weight matrices one token multiplies by (top_k experts, the router).
uint64_t block_active_matmul_weights(const TransformerModel& model);

// Named presets: "gpt3-175b", "llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b",
// "tiny" (a small dense model for tests).
const std::vector<TransformerModel>& transformer_presets();
std::vector<std::string> transformer_preset_names();
// By name; an unknown name is an InputError naming `field` and the allowed names.
const TransformerModel& transformer_preset(std::string_view name, std::string_view field);

// An InputError naming `field` when the shape cannot be a model (a size below 1, heads that
// do not divide hidden, kv_heads that do not divide heads, top_k above experts, a global
// batch that is not a multiple of the micro-batch).
void check_transformer(const TransformerModel& model, std::string_view field);

}  // namespace collsim::llm
