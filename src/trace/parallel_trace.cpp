#include "trace/parallel_trace.hpp"

#include <fmt/format.h>

#include "parallel/layout.hpp"
#include "plan/run_plan.hpp"
#include "scenario/scenario.hpp"
#include "trace/trace.hpp"
#include "util/errors.hpp"

using nlohmann::json;

namespace collsim {

namespace {

json verification_json(const Verification& v) {
  json out{{"verified", v.verified}, {"max_error", v.max_error}, {"checked_ranks", v.checked_ranks}};
  if (!v.verified) out["failure"] = v.failure;
  return out;
}

// Plain collectives: each group's own start, end and check.
json collective_communicators(const ParallelOutcome& outcome) {
  json list = json::array();
  for (size_t i = 0; i < outcome.communicators.size(); ++i) {
    const CommunicatorPlan& c = outcome.communicators[i];
    json groups = json::array();
    for (const GroupOutcome& g : outcome.groups) {
      if (g.communicator != c.index) continue;
      json group = verification_json(g.verification);
      group.update({{"ranks", c.groups[static_cast<size_t>(g.group)]}, {"start", g.start}, {"end", g.end}});
      groups.push_back(std::move(group));
    }
    list.push_back({{"name", communicator_trace_name(outcome.communicators, i)},
                    {"collective", collective_name(c.spec.kind)},
                    {"algorithm", c.algorithm->name},
                    {"reason", c.reason},
                    {"size", c.spec.size},
                    {"model_time", c.model_time},
                    {"time", outcome.communicator_time(c.index)},
                    {"groups", std::move(groups)}});
  }
  return list;
}

// A step's communicators: each dimension with more than one rank, its groups, the time of
// its most busy rank and who waited on it longest.
json step_communicators(const ParallelOutcome& outcome) {
  const ParallelismSpec& layout = outcome.plan->scenario.parallelism;
  const StepFigures& f = outcome.figures;
  const struct {
    Dimension dimension;
    double busy, exposed;
    StepFigures::Worst worst;
  } rows[] = {{Dimension::tensor, f.tensor_busy, f.critical.tensor, f.tensor_worst},
              {Dimension::pipeline, f.pipeline_busy, f.critical.pipeline, f.pipeline_worst},
              {Dimension::data, f.data_busy, f.critical.data_exposed(), f.data_worst},
              {Dimension::expert, f.expert_busy, f.critical.expert, f.expert_worst}};
  json list = json::array();
  for (const auto& row : rows) {
    if (layout.size_of(row.dimension) < 2) continue;
    json groups = json::array();
    for (const std::vector<int>& ranks : dimension_groups(layout, row.dimension)) groups.push_back({{"ranks", ranks}});
    list.push_back({{"name", std::string(dimension_names().name(row.dimension))},
                    {"time", row.busy},
                    {"exposed", row.exposed},
                    {"most_exposed", {{"rank", row.worst.rank}, {"seconds", row.worst.seconds}}},
                    {"groups", std::move(groups)}});
  }
  return list;
}

// Each collective of the step: its communicator and group, when it ran, its check.
json runs_json(const std::vector<CollectiveRun>& runs) {
  json list = json::array();
  for (const CollectiveRun& r : runs)
    list.push_back({{"communicator", step_communicator_name(r.communicator)}, {"group", r.group},
                    {"sequence", r.sequence}, {"collective", collective_name(r.kind)}, {"start", r.start},
                    {"end", r.end}, {"verified", r.verified}, {"max_error", r.max_error},
                    {"checked_ranks", r.checked_ranks}});
  return list;
}

json step_section(const ParallelOutcome& outcome) {
  const StepResult& step = *outcome.step;
  const StepSpec& spec = outcome.plan->scenario.parallelism.step;
  return {{"model", spec.model.name},
          {"gpu", spec.gpu},
          {"micro_batches", step.plan->micro_batches},
          {"collectives", step.collectives},
          {"pipeline_messages", step.pipeline_messages},
          {"figures", step_figures_json(outcome.figures)},
          {"runs", runs_json(step.runs)}};
}

// What the rebuilt data-parallel groups run, per bucket size (the plan's data_choices order):
// each algorithm chosen again for the groups' new size, with why.
json rebuilt_choices_json(const std::vector<DataChoice>& choices) {
  const auto one = [](const GroupAlgorithm& a) -> json {
    if (a.algorithm == nullptr) return nullptr;  // a group of one: nothing to reduce
    return {{"name", a.algorithm->name}, {"reason", a.reason}};
  };
  json list = json::array();
  for (const DataChoice& c : choices) list.push_back({{"bytes", c.bytes}, {"reduce", one(c.reduce)}, {"gather", one(c.gather)}});
  return list;
}

// A lost worker's replica leaving and the data-parallel groups rebuilt: the fields of the
// other runs' recovery entries (docs/trace-format.md#recovery), and the groups that redid.
json recovery_json(const std::vector<StepRecovery>& recoveries) {
  json list = json::array();
  for (const StepRecovery& r : recoveries) {
    json entry{{"epoch_before", r.epoch_before}, {"epoch_after", r.epoch_after}, {"round", 0},
               {"fault_time", r.fault_time}, {"detected", r.detected}, {"rebuilt", r.rebuilt},
               {"dropped_ranks", r.dropped_ranks}, {"dropped_hosts", r.dropped_hosts},
               {"joined_ranks", json::array()}, {"group", r.group}, {"reason", r.reason}, {"rule", r.rule},
               {"evidence", json::array()}};
    if (r.stopped) {
      entry["stopped"] = true;
    } else {
      entry["resumed"] = r.resumed;
      entry["data_groups"] = r.data_groups;
      entry["data_choices"] = rebuilt_choices_json(r.data_choices);
    }
    if (r.completed >= 0) entry["round_completed"] = r.completed;
    list.push_back(std::move(entry));
  }
  return list;
}

json intervals_json(const std::vector<StepInterval>& intervals) {
  json list = json::array();
  for (const StepInterval& i : intervals) {
    json interval{{"rank", i.rank}, {"lane", i.lane}, {"what", i.what}, {"start", i.start}, {"end", i.end}};
    if (i.micro_batch >= 0) interval["micro_batch"] = i.micro_batch;
    list.push_back(std::move(interval));
  }
  return list;
}

json platform_json(const RunPlan& plan) {
  return {{"source", plan.platform.source},
          {"kind", plan.platform.kind},
          {"hosts", plan.platform.hosts.size()},
          {"links", plan.platform.link_count},
          {"rank_hosts", plan.rank_hosts}};
}

}  // namespace

std::vector<StepInterval> parallel_intervals(const ParallelOutcome& outcome) {
  if (outcome.step) return outcome.step->intervals;
  std::vector<StepInterval> intervals;
  for (const GroupOutcome& g : outcome.groups) {
    const CommunicatorPlan& c = outcome.communicators[static_cast<size_t>(g.communicator)];
    const std::string what = fmt::format("{} {}", collective_name(c.spec.kind), c.algorithm->name);
    for (int rank : c.groups[static_cast<size_t>(g.group)])
      if (rank < max_activity_ranks)
        intervals.push_back({rank, communicator_trace_name(outcome.communicators, static_cast<size_t>(g.communicator)),
                             what, -1, g.start, g.end});
  }
  return intervals;
}

std::vector<StepInterval> intervals_from_trace(const json& parallel, const std::string& source) {
  std::vector<StepInterval> intervals;
  const json& list = parallel.at("intervals");
  for (size_t i = 0; i < list.size(); ++i) {
    const json& entry = list.at(i);
    try {
      intervals.push_back({entry.at("rank").get<int>(), entry.at("lane").get<std::string>(),
                           entry.at("what").get<std::string>(), entry.value("micro_batch", -1),
                           entry.at("start").get<double>(), entry.at("end").get<double>()});
    } catch (const json::exception& error) {
      throw InputError(fmt::format("{}: parallel.intervals[{}]: {}", source, i, error.what()));
    }
  }
  return intervals;
}

std::string communicator_trace_name(const std::vector<CommunicatorPlan>& communicators, size_t index) {
  const std::string name = communicators[index].spec.communicator();
  for (size_t earlier = 0; earlier < index; ++earlier)
    if (communicators[earlier].spec.communicator() == name) return fmt::format("{}#{}", name, index + 1);
  return name;
}

json build_parallel_trace(const ParallelOutcome& outcome) {
  const RunPlan& plan = *outcome.plan;
  const ParallelismSpec& layout = plan.scenario.parallelism;
  json parallel{{"layout", {{"tensor", layout.tensor}, {"pipeline", layout.pipeline}, {"data", layout.data},
                            {"expert", layout.expert}, {"workers", layout.workers()}}},
                {"step_time", outcome.step_time},
                {"message_count", outcome.step ? outcome.step->messages.count() : outcome.messages.count()},
                {"communicators", outcome.step ? step_communicators(outcome) : collective_communicators(outcome)}};
  parallel.update(verification_json(outcome.verification));
  if (!outcome.stall.empty()) parallel["stalled"] = outcome.stall;
  parallel["intervals"] = intervals_json(parallel_intervals(outcome));
  if (outcome.step) parallel["step"] = step_section(outcome);
  if (outcome.step && !outcome.step->recoveries.empty()) parallel["recovery"] = recovery_json(outcome.step->recoveries);
  return {{"format", trace_format},
          {"collsim_version", COLLSIM_VERSION},
          {"scenario", scenario_to_json(plan.scenario, plan.workers, plan.platform.source)},
          {"platform", platform_json(plan)},
          {"parallel", std::move(parallel)},
          {"notes", plan.notes}};
}

}  // namespace collsim
