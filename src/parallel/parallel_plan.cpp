#include "parallel/parallel_plan.hpp"

#include "parallel/communicators.hpp"
#include "parallel/step_plan.hpp"
#include "plan/plan_json.hpp"

namespace collsim {

namespace {

using nlohmann::json;

json algorithm_json(const GroupAlgorithm& a) {
  if (a.algorithm == nullptr) return nullptr;  // nothing to run (a group of one)
  json out{{"name", a.algorithm->name}, {"channels", a.channels}, {"reason", a.reason}, {"model_time", a.model_time},
           {"launch", a.launch}};
  if (!a.nccl.empty()) out["nccl"] = a.nccl;
  return out;
}

json step_json(const StepPlan& step) {
  json buckets = json::array();
  for (size_t s = 0; s < step.buckets.size(); ++s) {
    json list = json::array();
    for (size_t b = 0; b < step.buckets[s].size(); ++b)
      list.push_back({{"ready_after", step.buckets[s][b].ready_after},
                      {"bytes", step.buckets[s][b].bytes},
                      {"data_choice", step.bucket_choice[s][b]}});
    buckets.push_back(std::move(list));
  }
  json data_choices = json::array();
  for (const DataChoice& c : step.data_choices)
    data_choices.push_back({{"bytes", c.bytes}, {"reduce", algorithm_json(c.reduce)}, {"gather", algorithm_json(c.gather)}});
  return {{"micro_batches", step.micro_batches},
          {"stage_blocks", step.stage_blocks},
          {"forward_seconds", step.forward_seconds},
          {"backward_seconds", step.backward_seconds},
          {"output_forward_seconds", step.output_forward_seconds},
          {"pipeline_bytes", step.pipeline_bytes},
          {"buckets", std::move(buckets)},
          {"model_flops", step.model_flops},
          {"tokens", step.tokens},
          {"algorithms",
           {{"tensor_allreduce", algorithm_json(step.tensor_allreduce)},
            {"tensor_allgather", algorithm_json(step.tensor_allgather)},
            {"tensor_reduce_scatter", algorithm_json(step.tensor_reduce_scatter)},
            {"data_reduce", algorithm_json(step.data_choices.front().reduce)},
            {"data_gather", algorithm_json(step.data_choices.front().gather)},
            {"data_choices", std::move(data_choices)},
            {"expert_alltoall", algorithm_json(step.expert_alltoall)},
            {"expert_data_reduce", algorithm_json(step.expert_data_reduce)},
            {"pipeline_gather", algorithm_json(step.pipeline_gather)}}}};
}

json communicators_json(const std::vector<CommunicatorPlan>& communicators) {
  json list = json::array();
  for (const CommunicatorPlan& c : communicators)
    list.push_back({{"communicator", c.spec.communicator()},
                    {"collective", collective_name(c.spec.kind)},
                    {"algorithm", c.algorithm->name},
                    {"channels", c.channels},
                    {"reason", c.reason},
                    {"size", c.spec.size},
                    {"model_time", c.model_time},
                    {"launch", c.how.launch},
                    {"groups", c.groups}});
  return list;
}

}  // namespace

json parallel_plan_json(const RunPlan& plan) {
  json out = plan_json(plan);
  for (const char* unused : {"payload", "algorithm", "model", "training"}) out.erase(unused);
  const ParallelismSpec& p = plan.scenario.parallelism;
  json parallel{{"layout", {{"tensor", p.tensor}, {"pipeline", p.pipeline}, {"data", p.data}, {"expert", p.expert},
                            {"workers", p.workers()}}}};
  if (p.step.given) parallel["step"] = step_json(plan_step(plan));
  else parallel["communicators"] = communicators_json(plan_communicators(plan));
  out["parallel"] = std::move(parallel);
  return out;
}

}  // namespace collsim
