// A parameter server's process lost (its host preempted, collective.parameter_server
// placement "shared" or "dedicated"): the group regroups onto the servers left, or the run
// stops when none is. The protocol that leads here: coordinator.cpp.
#include "recovery/coordinator_impl.hpp"

namespace collsim::coordination {

namespace {

std::string server_list(const std::vector<int>& servers, const RunFacts& run) {
  std::vector<std::string> names;
  for (int s : servers) names.push_back(fmt::format("{} (on {})", s, run.server_hosts.at(static_cast<size_t>(s))));
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

// Told at the instant a host that runs servers is preempted (every server on it at once,
// and with placement "shared" its workers too). Synchronous servers keep nothing from round
// to round (each pull hands back the round's sum, and each worker applies it to its own
// copy of the model), so a server left can take over a lost one's shard at once: the group
// resumes the round in flight (the lowest round of its members) with the servers left, the
// vector split over them as if the run had started with them alone (even shards, shard i on
// the i-th server left in planned order; or each variable placed again by
// collective.parameter_server.variables over them). The workers on the lost host are
// dropped with it. No server left: the run stops, naming the lost ones.
void Coordinator::lose_servers(const Report& report) {
  if (servers_left_.empty())
    for (int s = 0; s < run_.servers; ++s) servers_left_.push_back(s);
  std::vector<int> lost, left;
  for (int s : servers_left_) (engine_.host_up(run_.world_size() + s) ? left : lost).push_back(s);
  if (lost.empty()) return;  // (one report per server: those on one host go at once)
  servers_left_ = left;
  Judgement judgement = judge();
  judgement.roots.clear();
  judgement.ambiguous.clear();
  judgement.order.clear();
  judgement.kept.clear();
  judgement.rule = "a parameter server lost";
  std::vector<int> up;
  for (int world : membership_.current().members()) (engine_.host_up(world) ? up : judgement.roots).push_back(world);
  const bool several = lost.size() > 1;
  const std::string what = fmt::format("parameter server{} {} {} lost at {:.9g} s", several ? "s" : "",
                                       server_list(lost, run_), several ? "were" : "was", report.since);
  RecoveryEvent* entry = nullptr;
  if (left.empty()) {
    stop_run(judgement, up,
             fmt::format("{}, and no parameter server is left: its shard of the gradient goes with it", what));
    entry = &decisions_.back();
  } else {
    engine_.servers_left(left);
    const size_t before = decisions_.size();
    rebuild(judgement);
    if (decisions_.size() == before) return;
    entry = &decisions_.back();
    if (!entry->stopped)
      entry->reason = fmt::format("{}: {} the server{} left, {}, {} as if the run had started with {} alone; the "
                                  "group resumes round {}",
                                  what, several ? "their shards go to" : "its shard goes to",
                                  left.size() > 1 ? "s" : "", server_list(left, run_),
                                  left.size() > 1 ? "the vector split over them" : "the whole vector on it",
                                  left.size() > 1 ? "them" : "it", entry->round);
  }
  entry->detected = entry->fault_time = report.since;  // told at once, not at a deadline
  entry->lost_servers = lost;
  for (int s : left) entry->servers.push_back(run_.server_hosts.at(static_cast<size_t>(s)));
}

}  // namespace collsim::coordination
