#include "llm/transformer.hpp"

#include <fmt/format.h>

#include "util/errors.hpp"
#include "util/suggest.hpp"

namespace collsim::llm {
namespace {

uint64_t u(int64_t value) { return static_cast<uint64_t>(value); }

// A norm's parameters: LayerNorm's weight and bias, or RMSNorm's weight.
uint64_t norm_parameters(const TransformerModel& m) { return (m.biases ? 2 : 1) * u(m.hidden); }

// Q and O are h x h; K and V h x (kv_heads x head size); with biases, one per output.
uint64_t attention_parameters(const TransformerModel& m) {
  const uint64_t h = u(m.hidden), kv = u(m.kv_width());
  const uint64_t weights = 2 * h * h + 2 * h * kv;
  return weights + (m.biases ? h + 2 * kv + h : 0);
}

// One MLP (one expert): GeLU's h x f and f x h, or SwiGLU's gate, up and down.
uint64_t mlp_weights(const TransformerModel& m) { return (m.mlp == Mlp::swiglu ? 3 : 2) * u(m.hidden) * u(m.ffn_hidden); }
uint64_t mlp_parameters(const TransformerModel& m) {
  const uint64_t biases = m.mlp == Mlp::swiglu ? 2 * u(m.ffn_hidden) + u(m.hidden) : u(m.ffn_hidden) + u(m.hidden);
  return mlp_weights(m) + (m.biases ? biases : 0);
}

// The router of a mixture of experts: h x experts, no bias (Mixtral's gate).
uint64_t router_parameters(const TransformerModel& m) { return m.experts > 1 ? u(m.hidden) * u(m.experts) : 0; }

TransformerModel gpt3_175b() {
  TransformerModel m;
  m.name = "gpt3-175b";
  m.layers = 96, m.hidden = 12288, m.ffn_hidden = 4 * 12288, m.heads = 96, m.kv_heads = 96;
  m.vocab = 50257, m.sequence = 2048, m.mlp = Mlp::gelu;
  m.biases = true, m.learned_positions = true, m.tied_embeddings = true, m.dropout = true;
  m.micro_batch = 1, m.global_batch = 1536;
  m.published_parameters = 175'000'000'000;
  m.source = "Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1 (n_params 175.0B, n_layers 96, "
             "d_model 12288, n_heads 96, n_ctx 2048; d_ff = 4 d_model, GPT-2's 50257-token vocabulary, sec. 2.1); "
             "batch 1536 as Narayanan et al. SC'21 sec. 5.1";
  return m;
}

// Llama 3 (Grattafiori et al. 2024, The Llama 3 Herd of Models, Table 3): SwiGLU, RMSNorm,
// rotary positions, grouped-query attention with 8 key/value heads, 128,256 tokens
// (sec. 3.2: "128K tokens"; the released tokenizer), untied output; sequence 8192 and
// 16M-token batches of 2048 sequences (Table 4).
TransformerModel llama3(const char* name, int layers, int64_t hidden, int64_t ffn, int heads, uint64_t published) {
  TransformerModel m;
  m.name = name;
  m.layers = layers, m.hidden = hidden, m.ffn_hidden = ffn, m.heads = heads, m.kv_heads = 8;
  m.vocab = 128256, m.sequence = 8192, m.mlp = Mlp::swiglu;
  m.micro_batch = 1, m.global_batch = 2048;
  m.published_parameters = published;
  m.source = fmt::format("Grattafiori et al. 2024, The Llama 3 Herd of Models, Table 3 ({} layers, model dimension "
                         "{}, FFN dimension {}, {} attention heads, 8 key/value heads, vocabulary 128K); Table 4 "
                         "(sequence 8192, 16M tokens per batch)",
                         layers, hidden, ffn, heads);
  return m;
}

// Llama's block (SwiGLU, RMSNorm, rotary, 8 key/value heads, untied) with 8 experts.
TransformerModel mixtral_8x7b() {
  TransformerModel m = llama3("mixtral-8x7b", 32, 4096, 14336, 32, 47'000'000'000);
  m.vocab = 32000, m.sequence = 4096, m.experts = 8, m.top_k = 2, m.global_batch = 1024;
  m.source = "Jiang et al. 2024, Mixtral of Experts, Table 1 (dim 4096, n_layers 32, hidden_dim 14336, n_heads 32, "
             "n_kv_heads 8, vocab_size 32000, num_experts 8, top_k_experts 2) and sec. 2 (\"47B parameters\", 13B "
             "active); sequence and batch are this preset's choice";
  return m;
}

// GPT-3's block at a size a test runs in seconds.
TransformerModel tiny() {
  TransformerModel m = gpt3_175b();
  m.name = "tiny";
  m.layers = 4, m.hidden = 256, m.ffn_hidden = 1024, m.heads = 8, m.kv_heads = 8, m.vocab = 1024, m.sequence = 256;
  m.global_batch = 8;
  m.published_parameters = 0;
  m.source = "a small GPT-shaped model for tests (no published count)";
  return m;
}

}  // namespace

uint64_t block_parameters(const TransformerModel& m) {
  return attention_parameters(m) + u(m.experts) * mlp_parameters(m) + router_parameters(m) + 2 * norm_parameters(m);
}

uint64_t block_expert_parameters(const TransformerModel& m) { return m.experts > 1 ? u(m.experts) * mlp_parameters(m) : 0; }

uint64_t embedding_parameters(const TransformerModel& m) {
  return u(m.vocab) * u(m.hidden) + (m.learned_positions ? u(m.sequence) * u(m.hidden) : 0);
}

uint64_t output_parameters(const TransformerModel& m) {
  return norm_parameters(m) + (m.tied_embeddings ? 0 : u(m.vocab) * u(m.hidden));
}

uint64_t total_parameters(const TransformerModel& m) {
  return u(m.layers) * block_parameters(m) + embedding_parameters(m) + output_parameters(m);
}

uint64_t active_parameters(const TransformerModel& m) {
  const uint64_t idle_experts = u(m.experts - m.top_k) * mlp_parameters(m);
  return total_parameters(m) - u(m.layers) * idle_experts;
}

uint64_t block_active_matmul_weights(const TransformerModel& m) {
  const uint64_t h = u(m.hidden), kv = u(m.kv_width());
  return 2 * h * h + 2 * h * kv + u(m.top_k) * mlp_weights(m) + router_parameters(m);
}

const std::vector<TransformerModel>& transformer_presets() {
  static const std::vector<TransformerModel> presets{
      gpt3_175b(),
      llama3("llama3-8b", 32, 4096, 14336, 32, 8'000'000'000),
      llama3("llama3-70b", 80, 8192, 28672, 64, 70'000'000'000),
      llama3("llama3-405b", 126, 16384, 53248, 128, 405'000'000'000),
      mixtral_8x7b(),
      tiny(),
  };
  return presets;
}

std::vector<std::string> transformer_preset_names() {
  std::vector<std::string> names;
  for (const auto& preset : transformer_presets()) names.push_back(preset.name);
  return names;
}

const TransformerModel& transformer_preset(std::string_view name, std::string_view field) {
  for (const auto& preset : transformer_presets())
    if (preset.name == name) return preset;
  const auto names = transformer_preset_names();
  throw InputError(fmt::format("{}: unknown model '{}'{}; allowed: {}", field, name, did_you_mean(name, names), join(names)));
}

void check_transformer(const TransformerModel& m, std::string_view field) {
  const auto fail = [&](const std::string& what) { throw InputError(fmt::format("{}: {}", field, what)); };
  if (m.layers < 1 || m.hidden < 1 || m.ffn_hidden < 1 || m.heads < 1 || m.kv_heads < 1 || m.vocab < 1 ||
      m.sequence < 1 || m.micro_batch < 1 || m.global_batch < 1 || m.experts < 1 || m.top_k < 1)
    fail("layers, hidden, ffn_hidden, heads, kv_heads, vocab, sequence, micro_batch, global_batch, experts and top_k "
         "must each be at least 1");
  if (m.hidden % m.heads != 0) fail(fmt::format("heads ({}) must divide hidden ({})", m.heads, m.hidden));
  if (m.heads % m.kv_heads != 0) fail(fmt::format("kv_heads ({}) must divide heads ({})", m.kv_heads, m.heads));
  if (m.top_k > m.experts) fail(fmt::format("top_k ({}) must not exceed experts ({})", m.top_k, m.experts));
  if (m.global_batch % m.micro_batch != 0)
    fail(fmt::format("global_batch ({}) must be a multiple of micro_batch ({})", m.global_batch, m.micro_batch));
}

}  // namespace collsim::llm
