#pragma once
// What one transformer block costs on one GPU of a parallel layout, per micro-batch: its
// FLOPs (Narayanan et al. SC'21, eq. 3), the activations it keeps for backward (Korthikanti
// et al. 2022, Table 2), the tensor-parallel collectives Megatron runs in it (Shoeybi et
// al. 2019: two allreduces forward and two backward; with sequence parallelism each is an
// allgather and a reduce-scatter, Korthikanti et al. 2022 sec. 4.2.2), and a mixture of
// experts' alltoalls (GShard, Lepikhin et al. 2021: dispatch and combine). Activations and
// the collectives' tensors are 16-bit (bf16). docs/training.md#llm-model-library.
#include <string_view>
#include <vector>

#include "algorithms/collective.hpp"
#include "llm/transformer.hpp"

namespace collsim::llm {

// What backward recomputes (Korthikanti et al. 2022): nothing; the attention core
// (QK^T, softmax, dropout, AV: "selective"); the whole block from its input ("full").
enum class Recompute { none, selective, full };
std::string_view recompute_name(Recompute recompute);
Recompute parse_recompute(std::string_view name, std::string_view field);

// A layout: tensor x pipeline x data GPUs. Expert parallelism splits each MoE layer's
// experts over `expert` GPUs of the data dimension (Megatron's rule: expert divides data).
struct Layout {
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  int expert = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::none;
  int zero_stage = 0;  // 0 to 3: what the data dimension shards (Rajbhandari et al. 2020)
  int virtual_stages = 1;  // model chunks per pipeline stage: Megatron's interleaved 1F1B when > 1
  // Megatron-LM's scatter/gather of the pipeline's tensors (2021-22, its default then; not in
  // Megatron-core): without sequence parallelism each tensor rank sends 1/t of the activation
  // and the receiving stage all-gathers it over its tensor group
  bool pipeline_scatter_gather = false;
  int gpus() const { return tensor * pipeline * data; }
};

// One collective of the tensor group: its kind and the bytes of the whole tensor (b x s x h
// x 2: what an allreduce reduces, what an allgather's result holds).
struct GroupCollective {
  Collective kind = Collective::allreduce;
  double bytes = 0;
};

struct LayerCosts {
  double forward_flops = 0;    // one micro-batch on one GPU: the block's FLOPs / tensor
  double backward_flops = 0;   // 2 x forward (gradients of inputs and of weights)
  double recompute_flops = 0;  // forward work redone before backward (by `recompute`)
  std::vector<GroupCollective> forward_collectives;   // tensor group, in order (none when tensor = 1)
  std::vector<GroupCollective> backward_collectives;  // backward's, and a full recompute's forward ones first
  double expert_alltoall_bytes = 0;  // each GPU's send buffer of one alltoall (0: dense); 2 forward, 2 backward
  double activation_bytes = 0;       // kept from forward until backward, one micro-batch, one GPU
};

// The block's forward FLOPs for one micro-batch, whole (no parallelism): 2 FLOPs per
// multiply-add of each weight matrix a token meets, and attention's QK^T and AV, 4 b s^2 h
// (no causal halving, as Narayanan et al. count).
double block_forward_flops(const TransformerModel& model);
// The logits' forward for one micro-batch, whole: 2 b s h V.
double output_forward_flops(const TransformerModel& model);

LayerCosts layer_costs(const TransformerModel& model, const Layout& layout);

// Bytes of activations one GPU of a pipeline stage sends its peer in the next stage per
// micro-batch (b s h x 2), and the gradient sent back is as large. With sequence parallelism
// each tensor rank holds and sends only its s / t of the sequence (Megatron-LM
// megatron/core/pipeline_parallel/schedules.py, get_tensor_shapes, commit 00611e6e:
// `effective_seq_length // tp_group.size()` when `config.sequence_parallel`); with the
// scatter/gather instead, 1/t of the flattened tensor (Megatron-LM megatron/p2p_communication.py,
// _communicate: `split_tensor_into_1d_equal_chunks` when `args.scatter_gather_tensors_in_pipeline`
// and not `args.sequence_parallel`; default on, `--no-scatter-gather-tensors-in-pipeline`).
double pipeline_message_bytes(const TransformerModel& model, const Layout& layout);
// Whether the receiving stage all-gathers what arrived over its tensor group, b s h x 2 in
// all (the same _communicate: `gather_split_1d_tensor`): the scatter/gather without sequence
// parallelism, with a tensor group of more than one.
bool pipeline_gathers(const Layout& layout);

// FLOPs of one step, all GPUs together: the model's own (forward and backward, 3 passes of
// each block and the logits: what MFU counts, PaLM's definition, Chowdhery et al. 2022
// appendix B) and the hardware's (with recomputation: Narayanan et al.'s eq. 3 for full).
double model_flops_per_step(const TransformerModel& model);
double hardware_flops_per_step(const TransformerModel& model, Recompute recompute);

}  // namespace collsim::llm
