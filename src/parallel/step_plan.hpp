#pragma once
// One training step of a transformer on a layout, decided before the engine runs
// (docs/parallelism.md#the-llm-step): the blocks of each pipeline stage, the micro-batches,
// what a block costs on one GPU (llm/layer_costs.hpp) turned into seconds at the stated
// fraction of the GPU's peak, the tensor, pipeline, expert and data-parallel messages, the
// gradient buckets of each stage and each communicator's algorithm.
#include <string>
#include <vector>

#include "llm/layer_costs.hpp"
#include "parallel/communicators.hpp"
#include "plan/run_plan.hpp"

namespace collsim {

// One gradient bucket of a stage: ready once the last micro-batch's backward has gone
// through `ready_after` of the stage's blocks (from its last block back), its bytes per GPU.
struct GradientBucket {
  int ready_after = 0;
  double bytes = 0;
};

// The data-parallel collectives of one bucket size: NCCL chooses per call (and auto by the
// cost model per size), so each distinct size of bucket has its own choice; a stage's last
// bucket, with the embedding or the output layer, is seldom the others' size.
struct DataChoice {
  double bytes = 0;       // per GPU
  GroupAlgorithm reduce;  // allreduce, or reduce-scatter with zero 1 (no algorithm: a group of one)
  GroupAlgorithm gather;  // with zero 1, the parameters' allgather after the step
};

struct StepPlan {
  llm::Layout layout;
  llm::LayerCosts block;                  // one block, one micro-batch, one GPU
  int micro_batches = 1;                  // per data-parallel replica
  std::vector<int> stage_blocks;          // blocks of each pipeline stage
  int chunks = 1;                         // model chunks per stage (virtual stages; 1: plain 1F1B), equal blocks each
  double forward_seconds = 0;             // one block's forward, one micro-batch
  double backward_seconds = 0;            // its backward (and what it recomputes)
  double output_forward_seconds = 0;      // the logits, on the last stage
  double pipeline_bytes = 0;              // activations (and their gradients) between stages
  std::vector<std::vector<GradientBucket>> buckets;  // [stage], in backward order
  std::vector<double> expert_gradient_bytes;  // [stage], per GPU, reduced in the expert-data group (empty: none)
  double model_flops = 0;                 // of the step, every GPU (MFU's numerator)
  double tokens = 0;                      // of the step
  // the algorithms: tensor (allreduce, or allgather and reduce-scatter with sequence
  // parallelism), data (allreduce, or reduce-scatter and allgather with zero 1), expert
  GroupAlgorithm tensor_allreduce, tensor_allgather, tensor_reduce_scatter;
  GroupAlgorithm expert_alltoall, expert_data_reduce;
  // Megatron-LM's scatter/gather of the pipeline's tensors (llm::pipeline_gathers): the
  // receiving stage's allgather of the whole activation over its tensor group (null: none)
  GroupAlgorithm pipeline_gather;
  double pipeline_gather_bytes = 0;
  // data: one choice per distinct bucket size, the largest bucket's first (never empty);
  // bucket_choice[stage][b] is bucket b's index in data_choices
  std::vector<DataChoice> data_choices;
  std::vector<std::vector<int>> bucket_choice;
  // On GPUs, what the pipeline's activations pay: NCCL's send/recv in a pipeline group (nullptr: nothing)
  std::shared_ptr<const MessageCost> pipeline_cost;
};

// Throws InputError naming the field when the model does not fit the layout's communicators.
StepPlan plan_step(const RunPlan& plan);

// The collectives of bucket size `original` chosen again for a data-parallel group rebuilt
// from the survivors (world ranks `members`): what auto or NCCL's tuner picks for its size, as
// for the original group (the original choice where the algorithm named cannot run there).
DataChoice rechoose_data(const RunPlan& plan, const DataChoice& original, const std::vector<int>& members);
// The same for the experts' gradients (`bytes` per GPU) in a rebuilt expert-data group.
GroupAlgorithm rechoose_expert_data(const RunPlan& plan, const GroupAlgorithm& original, double bytes,
                                    const std::vector<int>& members);

// The groups of the expert-data dimension: ranks of one tensor index, one stage and one
// place in their expert group (Megatron's expert-data-parallel group: data / expert ranks).
std::vector<std::vector<int>> expert_data_groups(const ParallelismSpec& layout);

}  // namespace collsim
