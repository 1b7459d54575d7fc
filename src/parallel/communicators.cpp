#include "parallel/communicators.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "algorithms/message_counts.hpp"
#include "model/cost_model.hpp"
#include "parallel/layout.hpp"
#include "plan/auto_choice.hpp"
#include "util/suggest.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace collsim {

namespace {

// The cost model's input for one group: the run's platform, the group's members as
// endpoints, the collective's own vector.
ModelInput model_of_group(const RunPlan& plan, const std::vector<int>& members, double bytes, Dtype dtype, int root,
                          int channels) {
  ModelInput in = model_for_members(plan.model, plan.locality.ids, members);
  in.elems = static_cast<size_t>(bytes / static_cast<double>(dtype_size(dtype)));
  in.bytes_per_elem = static_cast<double>(dtype_size(dtype));
  in.root = root;
  in.channels = channels;
  return in;
}

}  // namespace

GroupAlgorithm choose_group_algorithm(const RunPlan& plan, Collective kind, const std::string& asked, double bytes,
                                      Dtype dtype, int root, const std::vector<int>& members, const std::string& where) {
  const bool nccl = asked == "nccl" || (asked != "auto" && find_algorithm(kind, asked, where).uses.nccl);
  if (nccl)
    throw InputError(fmt::format("{}: NCCL's algorithms are not run with parallelism yet (the platform is built for "
                                 "NCCL's transport only when the whole run uses it); name one of {}", where,
                                 join(classic_algorithm_names(kind))));
  GroupAlgorithm chosen;
  if (asked != "auto") {
    chosen.algorithm = &find_algorithm(kind, asked, where);
    chosen.reason = "named in the scenario";
  } else {
    const auto ranked = rank_by_model(kind, model_of_group(plan, members, bytes, dtype, root, 1));
    const auto best = std::find_if(ranked.begin(), ranked.end(), [](const AutoCandidate& a) { return a.skipped.empty(); });
    if (best == ranked.end()) throw InputError(fmt::format("{}: auto found no algorithm that can run here", where));
    chosen.algorithm = &find_algorithm(kind, best->algorithm, where);
    chosen.channels = std::max(1, best->channels);
    chosen.reason = fmt::format("auto: fastest by the cost model on the first group ({})", format_time(best->model_time));
  }
  if (chosen.algorithm->switch_run != nullptr)
    throw InputError(fmt::format("{}: '{}' reduces in switches, which a parallel run does not start yet; name another",
                                 where, chosen.algorithm->name));
  chosen.model_time = model_time(*chosen.algorithm, model_of_group(plan, members, bytes, dtype, root, chosen.channels));
  return chosen;
}

Payload share_payload(double bytes, Dtype dtype, int group_size, int channels, double share) {
  const auto logical = static_cast<uint64_t>(bytes / static_cast<double>(dtype_size(dtype)));
  if (static_cast<double>(logical) <= share) return plan_payload(bytes, dtype, group_size, logical, channels);
  const auto chunks = static_cast<uint64_t>(group_size) * static_cast<uint64_t>(channels);
  const uint64_t multiple = std::max<uint64_t>(1, static_cast<uint64_t>(share / static_cast<double>(chunks))) * chunks;
  const uint64_t carried = std::min(logical, std::max(multiple, carried_to_represent(logical, chunks)));
  return plan_payload(bytes, dtype, group_size, carried, channels);
}


std::vector<CommunicatorPlan> plan_communicators(const RunPlan& plan) {
  const ParallelismSpec& layout = plan.scenario.parallelism;
  std::vector<CommunicatorPlan> out;
  for (size_t i = 0; i < layout.collectives.size(); ++i) {
    CommunicatorPlan c;
    c.index = static_cast<int>(i);
    c.spec = layout.collectives[i];
    c.groups = collective_groups(layout, c.spec);
    if (c.spec.size < static_cast<double>(dtype_size(c.spec.dtype)))
      throw InputError(fmt::format("parallelism.collectives.{}.size: {} bytes hold no {} element", i, c.spec.size,
                                   dtype_name(c.spec.dtype)));
    const GroupAlgorithm chosen = choose_group_algorithm(plan, c.spec.kind, c.spec.algorithm, c.spec.size, c.spec.dtype,
                                                         c.spec.root, c.groups.front(),
                                                         fmt::format("parallelism.collectives.{}.algorithm", i));
    c.algorithm = chosen.algorithm;
    c.channels = chosen.channels;
    c.reason = chosen.reason;
    c.model_time = chosen.model_time;
    size_t largest = 0;
    for (const auto& group : c.groups) largest = std::max(largest, group.size());
    // the run's budget shared by every rank of every collective (direct's p - 1 vectors held count)
    const double share = static_cast<double>(carried_budget_elements) / plan.workers / static_cast<double>(layout.collectives.size()) /
                         std::max(1.0, vectors_held_per_rank(*c.algorithm, static_cast<int>(largest)));
    c.payload = c.spec.carried_elements
                    ? plan_payload(c.spec.size, c.spec.dtype, static_cast<int>(largest), c.spec.carried_elements, c.channels)
                    : share_payload(c.spec.size, c.spec.dtype, static_cast<int>(largest), c.channels, share);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace collsim
