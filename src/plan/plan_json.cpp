#include "plan/plan_json.hpp"

#include <algorithm>

#include "algorithms/collective.hpp"
#include "model/cost_model.hpp"
#include "platform/network_model.hpp"

namespace collsim {

using nlohmann::json;

namespace {

json platform_json(const RunPlan& plan) {
  return {{"topology", plan.platform.source},
          {"kind", plan.platform.kind},
          {"hosts", plan.platform.hosts.size()},
          {"links", plan.platform.link_count},
          {"network", network_model_name(plan.scenario.network)}};
}

json placement_json(const RunPlan& plan) {
  std::vector<int> groups = plan.locality.ids;
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  return {{"workers", plan.workers},
          {"by", plan.scenario.placement.empty() ? "platform order" : "placement"},
          {"rank_hosts", plan.rank_hosts},
          {"locality_groups", groups.size()},
          {"locality_from", plan.locality.source},
          {"control_host", plan.control_host}};
}

json payload_json(const Payload& payload) {
  return {{"logical_bytes", payload.logical_bytes},
          {"logical_elements", payload.logical_elems},
          {"carried_elements", payload.carried_elems},
          {"bytes_per_element", payload.bytes_per_elem}};
}

json algorithm_json(const RunPlan& plan) {
  const AlgorithmChoice& choice = plan.choice;
  return {{"collective", collective_name(plan.scenario.collective.kind)},
          {"name", choice.algorithm->name},
          {"asked", choice.asked},
          {"chosen_by", choice.by},
          {"reason", choice.reason},
          {"parameters", choice.parameters},
          {"candidates", candidates_json(choice.candidates)}};
}

// The cost model's view and the bounds no algorithm beats, for one collective.
json model_json(const RunPlan& plan) {
  const ModelInput& model = plan.model;
  const LowerBound bound = lower_bound(plan.scenario.collective.kind, model);
  json cut = nullptr;
  if (plan.topology_bound.time > 0)
    cut = {{"time", plan.topology_bound.time},
           {"cut", plan.topology_bound.cut},
           {"bytes", plan.topology_bound.bytes},
           {"capacity", plan.topology_bound.capacity}};
  return {{"alpha", model.alpha},
          {"bandwidth", model.bandwidth},
          {"overhead", model.overhead},
          {"time", model_time(plan.algorithm(), model)},
          {"lower_bound", bound.value()},
          {"topology_bound", cut}};
}

json training_json(const RunPlan& plan) {
  const TrainingPlan& training = plan.training;
  json buckets = json::array();
  for (const BucketSlice& slice : training.buckets)
    buckets.push_back({{"first_layer", slice.bucket.first},
                       {"last_layer", slice.bucket.last},
                       {"parameters", slice.bucket.parameters},
                       {"carried_elements", slice.count}});
  json out{{"rounds", plan.scenario.training.rounds},
           {"buckets", buckets},
           {"sharding", sharding_names().name(training.sharding)},
           {"memory_per_worker", training.memory_per_worker},
           {"buckets_in_flight", training.buckets_in_flight}};
  out["batch"] = training.batch ? json(*training.batch) : json(nullptr);
  if (training.reduce_scatter != nullptr)
    out["halves"] = {training.reduce_scatter->name, training.allgather->name};
  return out;
}

json faults_json(const RunPlan& plan) {
  json faults = json::array();
  for (const PlannedFault& fault : plan.faults) {
    json row{{"fault", fault.index},
             {"kind", fault_kind_name(fault.spec.kind)},
             {"target", fault.target},
             {"host", fault.host.empty() ? json(nullptr) : json(fault.host)},
             {"links", fault.links},
             {"ranks", fault.ranks}};
    if (fault.spec.at) row["at"] = *fault.spec.at;
    if (fault.spec.at_round) row["at_round"] = *fault.spec.at_round;
    faults.push_back(row);
  }
  return faults;
}

json limits_json(const RunSize& limits) {
  return {{"hosts", limits.hosts},
          {"messages", limits.messages},
          {"buffer_bytes", limits.buffer_bytes},
          {"max_hosts", max_run_hosts},
          {"max_messages", max_run_messages},
          {"max_buffer_bytes", max_carried_bytes}};
}

}  // namespace

json candidates_json(const std::vector<AutoCandidate>& candidates) {
  json rows = json::array();
  for (const auto& c : candidates) {
    json row{{"algorithm", c.algorithm}};
    if (c.channels > 0) row["channels"] = c.channels;
    if (c.skipped.empty()) row["model_time"] = c.model_time;
    else row["skipped"] = c.skipped;
    if (!c.bottleneck.empty()) {
      row["bottleneck"] = c.bottleneck;
      row["sharing"] = c.sharing;
    }
    if (c.simulated_time) row["simulated_time"] = *c.simulated_time;
    if (!c.error.empty()) row["error"] = c.error;
    rows.push_back(row);
  }
  return rows;
}

json plan_json(const RunPlan& plan) {
  return {{"scenario", plan.scenario.name},
          {"platform", platform_json(plan)},
          {"placement", placement_json(plan)},
          {"payload", payload_json(plan.payload)},
          {"algorithm", algorithm_json(plan)},
          {"model", model_json(plan)},
          {"training", training_json(plan)},
          {"faults", faults_json(plan)},
          {"recovery", plan.scenario.recovery.policy == RecoveryPolicy::rebuild ? "rebuild" : "none"},
          {"limits", limits_json(plan.limits)},
          {"notes", plan.notes},
          {"warnings", plan.warnings}};
}

}  // namespace collsim
