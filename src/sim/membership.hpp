#pragma once
// Who is in the collective: the group of each epoch (the last is current), a group that
// takes over at the start of a round (a returning worker joins it), and whether recovery
// gave up. The coordinator decides (rebuild, admit, give_up); workers and the fault
// injectors only read it, except that a worker starting a round announces it
// (announce_round), which is what admissions and faults at a round go by.
#include <memory>
#include <string>
#include <vector>

#include "comm/comm_group.hpp"

namespace collsim {

class Membership {
public:
  // A group that takes over at the start of `round`; `joiner` (a world rank) joins it.
  struct Switch {
    int round = -1;
    int joiner = -1;
    std::shared_ptr<CommGroup> group;
  };

  // The group of epoch 0, before the engine runs.
  void start(std::shared_ptr<CommGroup> first);
  const CommGroup& current() const { return *groups_.back(); }
  const std::shared_ptr<CommGroup>& current_shared() const { return groups_.back(); }
  const Switch& pending_switch() const { return switch_; }
  bool gave_up() const { return !abort_reason_.empty(); }
  const std::string& abort_reason() const { return abort_reason_; }
  // The first round nobody has started yet.
  int next_unstarted_round() const { return highest_round_started_ + 1; }

  // The coordinator's decisions.
  void rebuild(std::shared_ptr<CommGroup> next);
  void admit(int round, int joiner, std::shared_ptr<CommGroup> next);
  void give_up(std::string reason);

  // A worker starts `round`; true when nobody had started it before.
  bool announce_round(int round);

private:
  std::vector<std::shared_ptr<CommGroup>> groups_;  // by epoch
  Switch switch_;
  std::string abort_reason_;
  int highest_round_started_ = -1;
};

}  // namespace collsim
