#include "parallel/step_plan.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <functional>

#include "llm/memory.hpp"
#include "nccl/constants.hpp"
#include "parallel/gpu_costs.hpp"
#include "parallel/layout.hpp"
#include "util/errors.hpp"

namespace collsim {

namespace {

constexpr double kGradientBytes = 2;  // bf16 gradients (Megatron's DDP default: grad_reduce_in_fp32 false)

llm::Layout layout_of(const ParallelismSpec& p) {
  llm::Layout layout;
  layout.tensor = p.tensor;
  layout.pipeline = p.pipeline;
  layout.data = p.data;
  layout.expert = p.expert;
  layout.sequence_parallel = p.step.sequence_parallel;
  layout.recompute = p.step.recompute;
  layout.zero_stage = p.step.zero;
  layout.virtual_stages = p.step.virtual_stages;
  layout.pipeline_scatter_gather = p.step.pipeline_scatter_gather;
  return layout;
}

// A stage's gradient buckets in backward order: blocks (their dense parameters per GPU) added
// up until a bucket holds bucket_parameters; the embedding or output layer's gradients, and
// the blocks left, make the last one (ready when backward is done).
std::vector<GradientBucket> stage_buckets(const llm::TransformerModel& m, const llm::Layout& layout, int stage, int blocks,
                                          double bucket_parameters) {
  const double block_dense = static_cast<double>(llm::block_parameters(m) - llm::block_expert_parameters(m)) / layout.tensor;
  const double block_experts = static_cast<double>(llm::block_expert_parameters(m)) / (layout.tensor * layout.expert);
  const double extra = llm::parameters_on_gpu(m, layout, stage) - blocks * (block_dense + block_experts);
  std::vector<GradientBucket> buckets;
  double filled = 0;
  for (int done = 1; done <= blocks; ++done) {
    filled += block_dense;
    if (filled >= bucket_parameters && done < blocks) {
      buckets.push_back({done, filled * kGradientBytes});
      filled = 0;
    }
  }
  buckets.push_back({blocks, (filled + std::max(0.0, extra)) * kGradientBytes});
  return buckets;
}

// (the data-parallel and expert-data groups are rebuilt from the survivors under recovery
// "rebuild": their algorithms may not reduce in switches, which would not follow them)
GroupAlgorithm choose(const RunPlan& plan, Collective kind, const std::string& asked, double bytes,
                      const std::vector<std::vector<int>>& groups, const std::string& where) {
  if (groups.empty() || groups.front().size() < 2 || bytes <= 0) return {};
  const bool rebuilt = plan.scenario.recovery.policy == RecoveryPolicy::rebuild && where.ends_with(".data");
  return choose_group_algorithm(plan, kind, asked, bytes, Dtype::bfloat16, 0, groups.front(), where, !rebuilt);
}

bool same_choice(const GroupAlgorithm& a, const GroupAlgorithm& b) {
  return a.algorithm == b.algorithm && a.channels == b.channels && a.launch == b.launch && a.fifo == b.fifo &&
         a.segment_elems == b.segment_elems && a.nccl == b.nccl;
}

// Each distinct bucket size's choice on the first data group, the largest bucket first; sizes
// whose choices come out alike (the same algorithm, channels, launch, FIFO, chunk) share one.
void choose_data_algorithms(const RunPlan& plan, StepPlan& step, const std::vector<std::vector<int>>& data) {
  const StepSpec& spec = plan.scenario.parallelism.step;
  const char* where = "parallelism.step.algorithms.data";
  std::vector<double> sizes;
  for (const auto& stage : step.buckets)
    for (const GradientBucket& b : stage) sizes.push_back(b.bytes);
  std::stable_sort(sizes.begin(), sizes.end(), std::greater<>());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::vector<std::pair<double, int>> index_of_size;
  for (const double bytes : sizes) {
    DataChoice choice{bytes, choose(plan, spec.zero > 0 ? Collective::reduce_scatter : Collective::allreduce,
                                    spec.data_algorithm, bytes, data, where),
                      {}};
    if (spec.zero > 0) choice.gather = choose(plan, Collective::allgather, spec.data_algorithm, bytes, data, where);
    const auto alike = std::find_if(step.data_choices.begin(), step.data_choices.end(), [&](const DataChoice& c) {
      return same_choice(c.reduce, choice.reduce) && same_choice(c.gather, choice.gather);
    });
    index_of_size.emplace_back(bytes, static_cast<int>(alike - step.data_choices.begin()));
    if (alike == step.data_choices.end()) step.data_choices.push_back(std::move(choice));
  }
  for (const auto& stage : step.buckets) {
    step.bucket_choice.emplace_back();
    for (const GradientBucket& b : stage)
      step.bucket_choice.back().push_back(
          std::find_if(index_of_size.begin(), index_of_size.end(), [&](const auto& s) { return s.first == b.bytes; })->second);
  }
}

void choose_algorithms(const RunPlan& plan, StepPlan& step) {
  const ParallelismSpec& p = plan.scenario.parallelism;
  const StepSpec& spec = p.step;
  const auto tensor = dimension_groups(p, Dimension::tensor), data = dimension_groups(p, Dimension::data);
  for (const llm::GroupCollective& c : step.block.forward_collectives) {
    GroupAlgorithm& slot = c.kind == Collective::allreduce   ? step.tensor_allreduce
                           : c.kind == Collective::allgather ? step.tensor_allgather
                                                             : step.tensor_reduce_scatter;
    if (slot.algorithm == nullptr) slot = choose(plan, c.kind, spec.tensor_algorithm, c.bytes, tensor, "parallelism.step.algorithms.tensor");
  }
  choose_data_algorithms(plan, step, data);
  if (step.block.expert_alltoall_bytes > 0)
    step.expert_alltoall = choose(plan, Collective::alltoall, spec.expert_algorithm, step.block.expert_alltoall_bytes,
                                  dimension_groups(p, Dimension::expert), "parallelism.step.algorithms.expert");
  if (p.pipeline > 1 && llm::pipeline_gathers(step.layout)) {
    // Megatron gathers with torch's all_gather, which NCCL runs as a ring: collsim has none of
    // NCCL's allgather, so a tensor group named "nccl" gathers with collsim's ring on NCCL's send/recv
    const bool nccl = spec.tensor_algorithm == "nccl" || nccl::algo_of(spec.tensor_algorithm).has_value();
    step.pipeline_gather_bytes = step.pipeline_bytes * p.tensor;
    step.pipeline_gather = choose(plan, Collective::allgather, nccl ? "ring" : spec.tensor_algorithm,
                                  step.pipeline_gather_bytes, tensor, "parallelism.step.algorithms.tensor");
  }
  if (p.pipeline > 1) {
    GroupAlgorithm pipeline;
    if (const auto gpus = run_gpu_system(plan)) price_send_recv(*gpus, dimension_groups(p, Dimension::pipeline).front(),
                                                                step.pipeline_bytes, pipeline);
    step.pipeline_cost = pipeline.cost;
  }
  if (!step.expert_gradient_bytes.empty())
    step.expert_data_reduce = choose(plan, Collective::allreduce, spec.data_algorithm, step.expert_gradient_bytes.front(),
                                     expert_data_groups(p), "parallelism.step.algorithms.data");
}

}  // namespace

std::vector<std::vector<int>> expert_data_groups(const ParallelismSpec& p) {
  std::vector<std::vector<int>> groups;
  for (int s = 0; s < p.pipeline; ++s)
    for (int e = 0; e < p.expert; ++e)
      for (int t = 0; t < p.tensor; ++t) {
        groups.emplace_back();
        for (int block = 0; block < p.data / p.expert; ++block) groups.back().push_back(world_rank_of(p, t, e + p.expert * block, s));
      }
  return groups;
}

DataChoice rechoose_data(const RunPlan& plan, const DataChoice& original, const std::vector<int>& members) {
  const StepSpec& spec = plan.scenario.parallelism.step;
  const char* where = "parallelism.step.algorithms.data";
  try {
    DataChoice choice{original.bytes, choose(plan, spec.zero > 0 ? Collective::reduce_scatter : Collective::allreduce,
                                             spec.data_algorithm, original.bytes, {members}, where), {}};
    if (spec.zero > 0) choice.gather = choose(plan, Collective::allgather, spec.data_algorithm, original.bytes, {members}, where);
    return choice;
  } catch (const InputError&) {
    return original;
  }
}

GroupAlgorithm rechoose_expert_data(const RunPlan& plan, const GroupAlgorithm& original, double bytes,
                                    const std::vector<int>& members) {
  try {
    return choose(plan, Collective::allreduce, plan.scenario.parallelism.step.data_algorithm, bytes, {members},
                  "parallelism.step.algorithms.data");
  } catch (const InputError&) {
    return original;
  }
}

// A link-down must cut workers off (their replica then leaves); a link that is no worker's
// own (a switch's) would break the transfers of whichever replicas cross it.
void check_lost_links(const RunPlan& plan) {
  for (const PlannedFault& fault : plan.faults)
    if (fault.spec.kind == FaultKind::link_down && fault.ranks.empty())
      throw InputError(fmt::format("faults.{}.link: {} is no worker's own link; in a training step a link-down cuts "
                                   "workers off (give the host or rank whose NIC fails)", fault.index, fault.target));
}

StepPlan plan_step(const RunPlan& plan) {
  check_lost_links(plan);
  const ParallelismSpec& p = plan.scenario.parallelism;
  const StepSpec& spec = p.step;
  const llm::TransformerModel& m = spec.model;
  StepPlan step;
  step.layout = layout_of(p);
  step.block = llm::layer_costs(m, step.layout);
  step.micro_batches = llm::micro_batches(m, step.layout);
  step.stage_blocks = llm::stage_layers(m, p.pipeline);
  step.chunks = spec.virtual_stages;
  const double speed = spec.peak_flops * spec.efficiency;
  step.forward_seconds = step.block.forward_flops / speed;
  step.backward_seconds = (step.block.backward_flops + step.block.recompute_flops) / speed;
  step.output_forward_seconds = llm::output_forward_flops(m) / p.tensor / speed;
  step.pipeline_bytes = llm::pipeline_message_bytes(m, step.layout);
  for (int s = 0; s < p.pipeline; ++s)
    step.buckets.push_back(stage_buckets(m, step.layout, s, step.stage_blocks[static_cast<size_t>(s)], spec.bucket_parameters));
  if (m.experts > 1 && p.data / p.expert > 1) {
    const double block_experts = static_cast<double>(llm::block_expert_parameters(m)) / (p.tensor * p.expert);
    for (int blocks : step.stage_blocks) step.expert_gradient_bytes.push_back(block_experts * blocks * kGradientBytes);
  }
  step.model_flops = llm::model_flops_per_step(m);
  step.tokens = static_cast<double>(m.global_batch) * m.sequence;
  choose_algorithms(plan, step);
  return step;
}

}  // namespace collsim
