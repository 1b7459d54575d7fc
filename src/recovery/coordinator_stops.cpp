// When the run stops (recovery.policy "rebuild" gives up): the coordinator cut off from the
// group, and the stop itself (the trace's event, everyone told to
// leave). The protocol that leads here: coordinator.cpp.
#include "recovery/coordinator_impl.hpp"

namespace collsim::coordination {

// The control host's own link (own_links_) stayed down past link_patience(): the run
// stops, saying why (and whom it would have dropped: the ranks it cuts off with the
// coordinator; none behind an idle control host's link).
void Coordinator::stop_cut_off(const Judgement& judgement, const CommGroup& group) {
  std::vector<std::string> names;
  for (LinkRef link : own_links_) names.emplace_back(engine_.link_name(link));
  const std::string host = run_.control_host;
  // Its own link, or switch links further on that no rank owns and no courier goes around.
  const std::string lost = own_links_switch_ ? fmt::format("lost its way to the group across switch links {}, which "
                                                           "no rank owns", fmt::join(names, ", "))
                                             : fmt::format("lost its link {}", fmt::join(names, ", "));
  if (judgement.roots.empty()) {
    stop_run(judgement, group.members(),
             fmt::format("the coordinator's host {} {}: no verdict can reach the group", host, lost));
    return;
  }
  const bool on_its_host = std::all_of(judgement.roots.begin(), judgement.roots.end(),
                                       [&](int world) { return run_.on_control_host(world); });
  const bool several = judgement.roots.size() > 1;
  stop_run(judgement, members_without(group.members(), judgement.roots),
           fmt::format("the coordinator's host {} {} ({} rank{} {}): no verdict can reach the group "
                       "to drop {}",
                       host, lost,
                       on_its_host ? "it shares the host with" : "cutting off with it",
                       several ? "s" : "", fmt::join(judgement.roots, ", "), several ? "them" : "it"));
}

// A resender gave up: no verdict reached `world` within link_patience(). When the control
// host's own link is the one down (the coordinator reaches no member), the coordinator
// has lost contact with the whole group for longer than it waits for its link: the run
// stops, as in await_own_link. Otherwise only the worker's way is down: it is cut off.
void Coordinator::lost_contact() {
  if (membership_.gave_up()) return;
  const Judgement judgement = judge();
  if (judgement.coordinator_cut) stop_cut_off(judgement, membership_.current());
}

// The run stops (a rebuild below recovery.min_workers, the coordinator cut off, a failure
// the evidence cannot attribute, a stall past the whole run): the trace says why and who
// was left (`left`); everyone is told to leave.
void Coordinator::stop_run(const Judgement& judgement, const std::vector<int>& left, std::string reason) {
  const CommGroup& group = membership_.current();
  membership_.give_up(std::move(reason));
  RecoveryEvent event = event_for(group, judgement);
  event.epoch_after = group.epoch();
  event.round = lowest_round(group, judgement.roots);
  event.group = left;
  event.undecided_ranks = judgement.ambiguous;
  event.stopped = true;
  event.reason = "stopped: " + membership_.abort_reason();
  decisions_.push_back(event);
  release_everyone();
}

}  // namespace collsim::coordination
