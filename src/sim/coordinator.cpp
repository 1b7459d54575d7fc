#include "sim/coordinator.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

constexpr uint64_t control_message_bytes = 64;

sg4::Mailbox* coordinator_mailbox() { return sg4::Mailbox::by_name("coordinator"); }
sg4::Mailbox* news_mailbox(int world) { return sg4::Mailbox::by_name(fmt::format("news:{}", world)); }

void tell(int world, GroupNews news) {
  // Detached: the coordinator must not block on a worker; a dead worker never reads it.
  news_mailbox(world)->put_init(new GroupNews(std::move(news)), control_message_bytes)->detach();
}

// A round's computation at nominal speed (what the coordinator can know: not the faults).
double compute_seconds(const RunState& state) {
  const auto& training = state.scenario->training;
  return training.compute + training.compute_flops / state.rank_hosts.front()->get_speed();
}

class Coordinator {
public:
  explicit Coordinator(RunState& state) : state_(state) {}

  void run() {
    for (;;) {
      std::unique_ptr<Report> first = receive(-1);
      if (!first) continue;  // a report lost on a failed link: its sender will be missing
      if (first->reason == "join") admit(first->world);
      else if (!answer_stale(*first)) rebuild(std::move(first));
    }
  }

private:
  // A returning worker joins at the next round that no worker has started yet, so that
  // every member switches group at the same round boundary.
  void admit(int world) {
    const CommGroup& group = state_.current_group();
    // Back before anyone noticed it was gone: it joins once the rebuild has dropped it.
    for (int g = 0; g < group.size(); ++g)
      if (group.world_rank(g) == world) {
        waiting_joins_.push_back(world);
        return;
      }
    const int round = state_.highest_round_started + 1;
    if (round >= state_.scenario->training.rounds) {
      tell(world, GroupNews{true, nullptr, 0});  // training is over before it could join
      return;
    }
    std::vector<int> members;
    for (int g = 0; g < group.size(); ++g) members.push_back(group.world_rank(g));
    members.push_back(world);
    std::sort(members.begin(), members.end());
    auto next = state_.new_group(group.epoch() + 1, members);
    state_.groups.push_back(next);
    state_.pending_switch = {round, world, next};

    RecoveryEvent event;
    event.epoch_before = group.epoch();
    event.epoch_after = next->epoch();
    event.round = round;
    event.detected = event.rebuilt = sg4::Engine::get_clock();
    event.joined_ranks = {world};
    event.group = members;
    event.reason = fmt::format("rank {} came back and rejoins at round {}", world, round);
    state_.recoveries.push_back(event);
    tell(world, GroupNews{false, next, round});
  }

  // The next report, or nullptr when the transfer failed (the sender's link is down) or
  // `timeout` (>= 0) passed; a timeout throws TimeoutException.
  std::unique_ptr<Report> receive(double timeout) {
    try {
      return std::unique_ptr<Report>(timeout < 0 ? coordinator_mailbox()->get<Report>()
                                                 : coordinator_mailbox()->get<Report>(timeout));
    } catch (const simgrid::NetworkFailureException&) {
      return nullptr;
    }
  }

  // A report from an older epoch comes from a worker already left out: tell it so.
  bool answer_stale(const Report& report) {
    if (report.epoch == state_.current_group().epoch()) return false;
    tell(report.world, GroupNews{true, nullptr, 0});
    return true;
  }

  void rebuild(std::unique_ptr<Report> first) {
    CommGroup& group = state_.current_group();
    const double detected = sg4::Engine::get_clock();
    const double window = 2 * state_.timeout_for(group) + compute_seconds(state_);
    std::map<int, Report> reports{{first->world, *first}};
    std::map<int, double> arrival{{first->world, detected}};

    // Collect the other members' reports until all are in or the window closes.
    const double deadline = detected + window;
    while (static_cast<int>(reports.size()) < group.size() && sg4::Engine::get_clock() < deadline) {
      try {
        std::unique_ptr<Report> next = receive(deadline - sg4::Engine::get_clock());
        if (!next) continue;
        if (next->reason == "join") {
          waiting_joins_.push_back(next->world);  // admitted once this rebuild is done
          continue;
        }
        if (!answer_stale(*next)) {
          reports.emplace(next->world, *next);
          arrival.emplace(next->world, sg4::Engine::get_clock());
        }
      } catch (const simgrid::TimeoutException&) {
        break;
      }
    }

    // Decide whom to drop.
    std::vector<int> dropped;
    std::string reason;
    for (int g = 0; g < group.size(); ++g)
      if (!reports.count(group.world_rank(g))) dropped.push_back(group.world_rank(g));
    const double timeout = state_.timeout_for(group);
    const double late = detected + timeout + 1.5 * compute_seconds(state_) + 100 * state_.model.alpha;
    if (!dropped.empty()) {
      reason = "did not report within the detection window (dead, or a straggler still busy)";
    } else if (std::any_of(arrival.begin(), arrival.end(), [&](auto& a) { return a.second > late; })) {
      // Healthy members time out together (a member one round ahead computes once more
      // first); one that reports later still was busy elsewhere: a straggler.
      for (const auto& [world, time] : arrival)
        if (time > late) dropped.push_back(world);
      reason = "reported its timeout well after the others (a straggler)";
    } else {
      std::map<int, int> accusations;
      for (const auto& [world, report] : reports)
        if (report.suspect >= 0) ++accusations[report.suspect];
      int most = 0;
      for (const auto& [world, count] : accusations) most = std::max(most, count);
      std::vector<int> accused;
      for (const auto& [world, count] : accusations)
        if (count == most) accused.push_back(world);
      // Only a single clear culprit is dropped; a tie would drop healthy workers too.
      if (most >= 2 && accused.size() == 1) dropped = accused;
      reason = fmt::format("{} of the {} members were waiting on it", most, group.size());
    }

    std::vector<int> survivors;
    for (int g = 0; g < group.size(); ++g)
      if (std::find(dropped.begin(), dropped.end(), group.world_rank(g)) == dropped.end())
        survivors.push_back(group.world_rank(g));
    if (dropped.empty() || survivors.empty()) {
      // No culprit can be named (or nobody would be left): give up rather than loop.
      state_.abort_reason = dropped.empty()
                                ? fmt::format("the coordinator could not tell which worker stalled epoch {}", group.epoch())
                                : "every worker would have to be dropped";
      for (const auto& [world, report] : reports) tell(world, GroupNews{true, nullptr, 0});
      return;
    }

    int resume_round = first->round;
    for (const auto& [world, report] : reports) resume_round = std::min(resume_round, report.round);
    auto next = state_.new_group(group.epoch() + 1, survivors);
    state_.groups.push_back(next);

    RecoveryEvent event;
    event.epoch_before = group.epoch();
    event.epoch_after = next->epoch();
    event.round = resume_round;
    for (const FaultEvent& fault : state_.fault_events)
      if (fault.action == "applied" && fault.time <= detected) event.fault_time = fault.time;
    event.detected = detected;
    event.rebuilt = sg4::Engine::get_clock();
    event.dropped_ranks = dropped;
    for (int world : dropped) event.dropped_hosts.push_back(state_.rank_hosts[static_cast<size_t>(world)]->get_name());
    event.group = survivors;
    event.reason = reason;
    state_.recoveries.push_back(event);

    for (int world : survivors) tell(world, GroupNews{false, next, resume_round});
    for (int world : dropped)
      if (reports.count(world)) tell(world, GroupNews{true, nullptr, 0});
    // Workers that came back meanwhile join now.
    std::vector<int> joins;
    joins.swap(waiting_joins_);
    for (int world : joins) admit(world);
  }

  RunState& state_;
  std::vector<int> waiting_joins_;
};

}  // namespace

void start_coordinator(RunState& state) {
  sg4::ActorPtr actor = sg4::Actor::create("coordinator", state.control_host, [&state] { Coordinator(state).run(); });
  actor->daemonize();  // it waits for reports forever; the run ends with the workers
}

GroupNews report_failure(const Report& report) {
  for (;;) {
    try {
      coordinator_mailbox()->put(new Report(report), control_message_bytes);
      break;
    } catch (const simgrid::TimeoutException&) {
      // The coordinator closed its detection window while this report travelled: again.
    } catch (const simgrid::NetworkFailureException&) {
      return GroupNews{true, nullptr, 0};  // cut off from the coordinator: leave the run
    }
  }
  std::unique_ptr<GroupNews> news(news_mailbox(report.world)->get<GroupNews>());
  return *news;
}

}  // namespace collsim
