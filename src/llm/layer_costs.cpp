#include "llm/layer_costs.hpp"

#include "util/named_enum.hpp"

namespace collsim::llm {
namespace {

const NamedEnum<Recompute>& recompute_names() {
  static const NamedEnum<Recompute> table{
      "recomputation", {{Recompute::none, "none"}, {Recompute::selective, "selective"}, {Recompute::full, "full"}}};
  return table;
}

constexpr double kBytes16 = 2;  // bf16 activations and collective tensors

double d(int64_t value) { return static_cast<double>(value); }

// Attention's two s x s products, QK^T and AV, over every head: 2 x 2 b s^2 h.
double attention_core_flops(const TransformerModel& m) {
  return 4.0 * d(m.micro_batch) * d(m.sequence) * d(m.sequence) * d(m.hidden);
}

// Korthikanti et al. 2022 sec. 4.1, counted term by term so that grouped-query attention,
// SwiGLU and a mixture of experts change the terms they change; for GPT's block (K and V
// as wide as Q, f = 4h, dropout) the three parts add up to their 34 s b h + 5 a s^2 b.
struct ActivationParts {
  double outside_tensor = 0;  // the norms' inputs, the QKV and MLP inputs, dropout masks: split only by sequence parallelism
  double inside_tensor = 0;   // Q, K, V, the output projection's input, the MLP's inner tensors: split by tensor
  double attention_core = 0;  // softmax output (and dropout's mask and output): split by tensor, gone with selective
};

ActivationParts activation_parts(const TransformerModel& m) {
  const double tokens = d(m.micro_batch) * d(m.sequence), h = d(m.hidden), k = d(m.kv_width()), f = d(m.ffn_hidden);
  ActivationParts parts;
  parts.outside_tensor = tokens * (2 * 2 * h + 2 * h + 2 * h + (m.dropout ? 2 * h : 0));
  const double mlp_inner = (m.mlp == Mlp::swiglu ? 3 : 2) * kBytes16 * f * m.top_k;
  parts.inside_tensor = tokens * (kBytes16 * (h + k) + kBytes16 * k + kBytes16 * h + mlp_inner);
  const double scores = d(m.heads) * d(m.sequence) * tokens;  // a s^2 b
  parts.attention_core = scores * (kBytes16 + (m.dropout ? 1 + kBytes16 : 0));
  return parts;
}

double activation_bytes(const TransformerModel& m, const Layout& layout) {
  const ActivationParts parts = activation_parts(m);
  const double t = layout.tensor, outside_split = layout.sequence_parallel ? t : 1;
  const double input = kBytes16 * d(m.micro_batch) * d(m.sequence) * d(m.hidden);
  switch (layout.recompute) {
    case Recompute::full: return input / outside_split;  // only the block's input is kept
    case Recompute::selective: return parts.outside_tensor / outside_split + parts.inside_tensor / t;
    case Recompute::none: break;
  }
  return parts.outside_tensor / outside_split + (parts.inside_tensor + parts.attention_core) / t;
}

// Megatron's tensor-parallel block (Shoeybi et al. 2019, Fig. 3): an allreduce after
// attention and one after the MLP, in forward (g) and again in backward (f); with sequence
// parallelism each becomes an allgather before and a reduce-scatter after (Korthikanti et
// al. 2022 Fig. 5), backward the same.
std::vector<GroupCollective> tensor_collectives(const TransformerModel& m, const Layout& layout) {
  if (layout.tensor <= 1) return {};
  const double bytes = kBytes16 * d(m.micro_batch) * d(m.sequence) * d(m.hidden);
  if (!layout.sequence_parallel) return {{Collective::allreduce, bytes}, {Collective::allreduce, bytes}};
  return {{Collective::allgather, bytes}, {Collective::reduce_scatter, bytes},
          {Collective::allgather, bytes}, {Collective::reduce_scatter, bytes}};
}

}  // namespace

std::string_view recompute_name(Recompute recompute) { return recompute_names().name(recompute); }
Recompute parse_recompute(std::string_view name, std::string_view field) { return recompute_names().parse(name, field); }

double block_forward_flops(const TransformerModel& m) {
  return 2.0 * d(m.micro_batch) * d(m.sequence) * static_cast<double>(block_active_matmul_weights(m)) +
         attention_core_flops(m);
}

double output_forward_flops(const TransformerModel& m) {
  return 2.0 * d(m.micro_batch) * d(m.sequence) * d(m.hidden) * d(m.vocab);
}

double pipeline_message_bytes(const TransformerModel& m, const Layout& layout) {
  const double split = layout.sequence_parallel || layout.pipeline_scatter_gather ? layout.tensor : 1;
  return kBytes16 * d(m.micro_batch) * d(m.sequence) * d(m.hidden) / split;
}

bool pipeline_gathers(const Layout& layout) {
  return layout.pipeline_scatter_gather && !layout.sequence_parallel && layout.tensor > 1;
}

LayerCosts layer_costs(const TransformerModel& m, const Layout& layout) {
  LayerCosts costs;
  costs.forward_flops = block_forward_flops(m) / layout.tensor;
  costs.backward_flops = 2 * costs.forward_flops;
  if (layout.recompute == Recompute::full) costs.recompute_flops = costs.forward_flops;
  if (layout.recompute == Recompute::selective) costs.recompute_flops = attention_core_flops(m) / layout.tensor;
  costs.forward_collectives = tensor_collectives(m, layout);
  if (layout.recompute == Recompute::full) costs.backward_collectives = costs.forward_collectives;
  for (const auto& collective : tensor_collectives(m, layout)) costs.backward_collectives.push_back(collective);
  if (m.experts > 1 && layout.expert > 1) {
    const double routed = kBytes16 * d(m.micro_batch) * d(m.sequence) * d(m.hidden) * m.top_k;
    costs.expert_alltoall_bytes = routed / (layout.sequence_parallel ? layout.tensor : 1);
  }
  costs.activation_bytes = activation_bytes(m, layout);
  return costs;
}

double model_flops_per_step(const TransformerModel& m) {
  const double micro_batches = d(m.global_batch) / d(m.micro_batch);
  return micro_batches * 3 * (d(m.layers) * block_forward_flops(m) + output_forward_flops(m));
}

double hardware_flops_per_step(const TransformerModel& m, Recompute recompute) {
  Layout whole;
  whole.recompute = recompute;
  const double micro_batches = d(m.global_batch) / d(m.micro_batch);
  return model_flops_per_step(m) + micro_batches * d(m.layers) * layer_costs(m, whole).recompute_flops;
}

}  // namespace collsim::llm
