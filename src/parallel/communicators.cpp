#include "parallel/communicators.hpp"

#include <algorithm>
#include <optional>
#include <fmt/format.h>

#include "algorithms/message_counts.hpp"
#include "model/cost_model.hpp"
#include "parallel/gpu_costs.hpp"
#include "parallel/group_switches.hpp"
#include "parallel/layout.hpp"
#include "plan/auto_choice.hpp"
#include "util/suggest.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace collsim {

namespace {

// The cost model's input for one group: the run's platform, the group's members as
// endpoints, the collective's own vector, what its messages pay (`how`).
ModelInput model_of_group(const RunPlan& plan, const std::vector<int>& members, double bytes, Dtype dtype, int root,
                          const GroupAlgorithm& how) {
  ModelInput in = model_for_members(plan.model, plan.locality.ids, members);
  in.elems = static_cast<size_t>(bytes / static_cast<double>(dtype_size(dtype)));
  in.bytes_per_elem = static_cast<double>(dtype_size(dtype));
  in.root = root;
  in.channels = how.channels;
  in.message_cost = how.cost;
  in.fifo = how.fifo;
  in.hop_inside = how.hop_inside;
  in.hop_across = how.hop_across;
  if (how.segment_elems > 0) in.segment_elems = how.segment_elems;
  // NCCL's rings and trees turn inside the nodes (the run's locality groups)
  if (in.locality.empty() && how.algorithm != nullptr && how.algorithm->uses.nccl)
    for (int world : members) in.locality.push_back(plan.locality.ids[static_cast<size_t>(world)]);
  // NVLS and CollNet reduce in the group's switches: endpoints after the ranks' in a network
  // that holds them (parallel/group_switches.hpp)
  if (how.algorithm != nullptr && how.algorithm->switch_run != nullptr) {
    const auto algo = nccl::algo_of(how.algorithm->name);
    in.network = network_with_switches(plan);
    in.switch_endpoints.clear();
    for (const SwitchPort& port : group_switches(run_switches(plan), *algo, members, plan.locality.ids, "").ports)
      in.switch_endpoints.push_back(port.endpoint);
  }
  return in;
}

}  // namespace

GroupAlgorithm choose_group_algorithm(const RunPlan& plan, Collective kind, const std::string& asked, double bytes,
                                      Dtype dtype, int root, const std::vector<int>& members, const std::string& where,
                                      bool switches_follow) {
  const bool nccl = asked == "nccl" || (asked != "auto" && find_algorithm(kind, asked, where).uses.nccl);
  const std::optional<nccl::GpuSystem> gpus = run_gpu_system(plan);
  GroupAlgorithm chosen;
  if (nccl) {
    if (kind != Collective::allreduce)
      throw InputError(fmt::format("{}: NCCL's algorithms run here for an allreduce only (collsim has none of NCCL's "
                                   "{}: on GPUs collsim's run on NCCL's send/recv); name one of {}",
                                   where, collective_name(kind), join(classic_algorithm_names(kind))));
    if (!gpus)
      throw InputError(fmt::format("{}: NCCL's algorithms run on GPUs: the platform's hosts name none (the dgx-, gb200- "
                                   "and rail presets do), or nccl.gpu_cost is false; name one of {}",
                                   where, join(classic_algorithm_names(kind))));
    chosen = nccl_group_allreduce(plan, *gpus, asked, bytes, dtype, members, where, switches_follow);
  } else {
    if (gpus) price_send_recv(*gpus, members, bytes, chosen);
    if (asked != "auto") {
      chosen.algorithm = &find_algorithm(kind, asked, where);
      chosen.reason = "named in the scenario";
    } else {
      const auto ranked = rank_by_model(kind, model_of_group(plan, members, bytes, dtype, root, chosen));
      const auto best = std::find_if(ranked.begin(), ranked.end(), [](const AutoCandidate& a) { return a.skipped.empty(); });
      if (best == ranked.end()) throw InputError(fmt::format("{}: auto found no algorithm that can run here", where));
      chosen.algorithm = &find_algorithm(kind, best->algorithm, where);
      chosen.channels = std::max(1, best->channels);
      chosen.reason = fmt::format("auto: fastest by the cost model on the first group ({})", format_time(best->model_time));
    }
  }
  if (chosen.algorithm->switch_run != nullptr && !chosen.algorithm->uses.nccl)
    throw InputError(fmt::format("{}: '{}' reduces in switches, which a parallel run does not start yet; name another",
                                 where, chosen.algorithm->name));
  chosen.model_time = model_time(*chosen.algorithm, model_of_group(plan, members, bytes, dtype, root, chosen));
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
    c.how = chosen;
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
