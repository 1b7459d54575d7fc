#include "llm/step_estimate.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "llm/memory.hpp"
#include "llm/transformer.hpp"

namespace collsim::llm {
namespace {

// What one micro-batch costs on one stage: FLOPs time, and the collectives of its blocks.
struct Slot {
  double compute = 0, tensor = 0, expert = 0, backward = 0;
  double total(double pipeline_messages) const { return compute + tensor + expert + pipeline_messages; }
  // One model chunk's share of the slot, with its own messages: what one of the interleaved
  // schedule's (v m + P - 1) slots lasts (the whole stage's slot when v = 1).
  double chunk(int chunks, double pipeline_messages) const { return (compute + tensor + expert) / chunks + pipeline_messages; }
};

const LinkCost& link_for(int span, const Cluster& cluster) {
  return span <= cluster.gpus_per_node ? cluster.nvlink : cluster.nic;
}

double collectives_time(const std::vector<GroupCollective>& collectives, int group, const LinkCost& link) {
  double time = 0;
  for (const auto& c : collectives) time += ring_time(c.kind, c.bytes, group, link);
  return time;
}

Slot stage_slot(const TransformerModel& m, const Layout& layout, const Cluster& cluster, int stage) {
  const LayerCosts costs = layer_costs(m, layout);
  const double rate = cluster.gpu.peak_bf16_flops * cluster.efficiency;
  const double blocks = stage_layers(m, layout.pipeline).at(static_cast<size_t>(stage));
  const LinkCost& tensor_link = link_for(layout.tensor, cluster);
  Slot slot;
  slot.backward = blocks * (costs.backward_flops + costs.recompute_flops) / rate;
  slot.compute = blocks * costs.forward_flops / rate + slot.backward;
  if (stage == layout.pipeline - 1) {  // the logits, forward and backward
    slot.compute += 3 * output_forward_flops(m) / layout.tensor / rate;
  }
  slot.tensor = blocks * (collectives_time(costs.forward_collectives, layout.tensor, tensor_link) +
                          collectives_time(costs.backward_collectives, layout.tensor, tensor_link));
  if (layout.pipeline > 1 && pipeline_gathers(layout))  // each chunk's two receives, each all-gathered
    slot.tensor += 2 * layout.virtual_stages *
                   ring_time(Collective::allgather, pipeline_message_bytes(m, layout) * layout.tensor, layout.tensor, tensor_link);
  const LinkCost& expert_link = link_for(layout.tensor * layout.expert, cluster);
  slot.expert = blocks * 4 * ring_time(Collective::alltoall, costs.expert_alltoall_bytes, layout.expert, expert_link);
  return slot;
}

// The first stage's gradients (its weights' bf16 copy) over the data group after its last
// backward: ZeRO 0 to 2 move an allreduce's bytes (a reduce-scatter, then the updated
// weights' allgather), ZeRO-3 one allgather more (the weights gathered again for forward).
double data_time(const TransformerModel& m, const Layout& layout, const Cluster& cluster) {
  const double bytes = 2 * parameters_on_gpu(m, layout, 0);
  const LinkCost& link = link_for(layout.tensor * layout.data, cluster);
  const double allreduce = ring_time(Collective::allreduce, bytes, layout.data, link);
  return layout.zero_stage == 3 ? allreduce + ring_time(Collective::allgather, bytes, layout.data, link) : allreduce;
}

// What of the data-parallel time `data` the first stage leaves exposed after its compute ends.
// Its gradients are reduced as backward makes them: in 1F1B from the start of the last
// micro-batch's backward (`backward`, the stage's). With v interleaved chunks Megatron's
// cool-down runs the last P micro-batches' backwards chunk by chunk, chunk v-1 first, so chunk
// c's gradients (data / v of the time) can be reduced from (c P + 1) chunk backwards (backward
// / v each) before the end; the stream, reducing in that order, ends
// max over c of ((c + 1) data - (c P + 1) backward) / v after the compute (v = 1: data - backward).
double exposed_data(double data, double backward, int p, int v) {
  double exposed = 0;
  for (int c = 0; c < v; ++c) exposed = std::max(exposed, ((c + 1) * data - (c * p + 1) * backward) / v);
  return exposed;
}

std::string largest_part(const StepEstimate& e) {
  const std::pair<const char*, double> parts[] = {{"tensor", e.tensor.exposed},     {"pipeline", e.pipeline.exposed},
                                                  {"data", e.data.exposed},         {"expert", e.expert.exposed},
                                                  {"bubble", e.bubble_time}};
  const auto* largest = std::max_element(std::begin(parts), std::end(parts),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
  return largest->second > 0 ? largest->first : "compute";
}

// Messages each rank of a ring of `group` sends in one collective of `kind`.
double ring_messages(Collective kind, int group) {
  if (group <= 1) return 0;
  return kind == Collective::allreduce ? 2.0 * (group - 1) : group - 1;
}

// The gradient buckets of a stage of `blocks` blocks, as the simulated step makes them
// (parallel/step_plan.cpp): blocks added up until a bucket holds bucket_parameters, the rest
// (with the embedding or output layer) in the last one.
int stage_bucket_count(const TransformerModel& m, const Layout& layout, int blocks, double bucket_parameters) {
  const double block_dense = static_cast<double>(block_parameters(m) - block_expert_parameters(m)) / layout.tensor;
  int buckets = 1;
  double filled = 0;
  for (int done = 1; done <= blocks; ++done) {
    filled += block_dense;
    if (filled >= bucket_parameters && done < blocks) {
      ++buckets;
      filled = 0;
    }
  }
  return buckets;
}

}  // namespace

double step_messages(const TransformerModel& m, const Layout& layout, double bucket_parameters) {
  const LayerCosts costs = layer_costs(m, layout);
  const double micro = micro_batches(m, layout);
  double per_block = 0;  // one micro-batch's pass of one block, forward and backward, on one rank
  for (const auto* list : {&costs.forward_collectives, &costs.backward_collectives})
    for (const GroupCollective& c : *list) per_block += ring_messages(c.kind, layout.tensor);
  if (costs.expert_alltoall_bytes > 0) per_block += 4 * ring_messages(Collective::alltoall, layout.expert);
  const Collective reduce = layout.zero_stage > 0 ? Collective::reduce_scatter : Collective::allreduce;
  const double per_bucket = ring_messages(reduce, layout.data) +
                            (layout.zero_stage > 0 ? ring_messages(Collective::allgather, layout.data) : 0);
  const bool expert_data = m.experts > 1 && layout.data / layout.expert > 1;
  const double ranks_per_stage = static_cast<double>(layout.tensor) * layout.data;
  double messages = 0;
  const std::vector<int> blocks = stage_layers(m, layout.pipeline);
  for (int b : blocks) {
    double per_rank = micro * b * per_block + stage_bucket_count(m, layout, b, bucket_parameters) * per_bucket;
    if (expert_data) per_rank += ring_messages(Collective::allreduce, layout.data / layout.expert);
    messages += ranks_per_stage * per_rank;
  }
  // activations forward from every virtual stage but the last, their gradients back from every
  // one but the first: 2 (P v - 1) a micro-batch in each tensor x data chain
  const double virtual_stages = static_cast<double>(layout.pipeline) * layout.virtual_stages;
  // (with the scatter/gather, each arrival all-gathered in the receiving tensor group)
  const double per_arrival = 1 + (pipeline_gathers(layout) ? ring_messages(Collective::allgather, layout.tensor) : 0);
  return messages + ranks_per_stage * 2 * (virtual_stages - 1) * micro * per_arrival;
}

double ring_time(Collective kind, double bytes, int group, const LinkCost& link) {
  if (group <= 1 || bytes <= 0) return 0;
  const double step = link.latency + bytes / (group * link.bandwidth);
  switch (kind) {
    case Collective::allreduce: return 2.0 * (group - 1) * step;
    case Collective::allgather:
    case Collective::reduce_scatter:
    case Collective::alltoall: return (group - 1) * step;
    default: throw std::logic_error("ring_time: no ring for this collective");
  }
}

StepEstimate estimate_step(const TransformerModel& m, const Layout& layout, const Cluster& cluster) {
  const int p = layout.pipeline, v = layout.virtual_stages, micro = micro_batches(m, layout);
  const LinkCost& pipeline_link = link_for(layout.tensor * layout.data * p, cluster);
  // a chunk's activation in and its gradient back, per micro-batch (v of each on a stage)
  const double message = p > 1 ? 2 * (pipeline_link.latency + pipeline_message_bytes(m, layout) / pipeline_link.bandwidth) : 0;
  Slot slowest;
  for (int stage = 0; stage < p; ++stage) {
    const Slot slot = stage_slot(m, layout, cluster, stage);
    if (stage == 0 || slot.total(v * message) > slowest.total(v * message)) slowest = slot;
  }
  StepEstimate e;
  e.compute_time = micro * slowest.compute;
  e.tensor = {micro * slowest.tensor, micro * slowest.tensor, layout.tensor > cluster.gpus_per_node};
  e.expert = {micro * slowest.expert, micro * slowest.expert, layout.tensor * layout.expert > cluster.gpus_per_node};
  e.pipeline = {micro * v * message, micro * v * message, layout.tensor * layout.data * p > cluster.gpus_per_node};
  e.bubble_time = (p - 1) * slowest.chunk(v, message);
  e.bubble_fraction = static_cast<double>(p - 1) / (static_cast<double>(v) * micro + p - 1);
  const double data = data_time(m, layout, cluster);
  e.data = {data, exposed_data(data, stage_slot(m, layout, cluster, 0).backward, p, v),
            layout.tensor * layout.data > cluster.gpus_per_node};
  e.step_time = e.compute_time + e.tensor.exposed + e.expert.exposed + e.pipeline.exposed + e.bubble_time + e.data.exposed;
  e.mfu = model_flops_per_step(m) / (e.step_time * layout.gpus() * cluster.gpu.peak_bf16_flops);
  e.tokens_per_second = static_cast<double>(m.global_batch) * m.sequence / e.step_time;
  e.bound_by = largest_part(e);
  return e;
}

}  // namespace collsim::llm
