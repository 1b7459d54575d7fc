#pragma once
// Who is in the collective: the group of each epoch (the last is current), the groups that
// take over at the start of a round (returning workers join them), the joiners that have
// not received the model yet, and whether recovery gave up. The coordinator decides
// (rebuild, admit, give_up); workers and the fault injectors only read it, except that a
// worker starting a round announces it (announce_round), which is what admissions and
// faults at a round go by, and a joiner says when the model has reached it (model_received).
#include <memory>
#include <string>
#include <vector>

#include "comm/comm_group.hpp"

namespace collsim {

class Membership {
public:
  // A group that takes over at the start of `round`; `joiners` (world ranks) join it and
  // receive the model from `root` (a world rank that has it), chosen at the admission so
  // that every member broadcasts from the same one.
  struct Switch {
    int round = -1;
    std::vector<int> joiners;
    int root = -1;
    std::shared_ptr<CommGroup> group;
  };

  // The group of epoch 0, before the engine runs.
  void start(std::shared_ptr<CommGroup> first);
  const CommGroup& current() const { return *groups_.back(); }
  const std::shared_ptr<CommGroup>& current_shared() const { return groups_.back(); }
  // The switch at the start of `round` (nullptr: none).
  const Switch* switch_at(int round) const;
  // `world` was admitted and has not received the model yet (it has no state of its own).
  bool awaiting_model(int world) const;
  // A worker admitted since the last rebuild: the round it joins at, and whether the
  // model has reached it.
  struct Joiner {
    int world = -1;
    int round = -1;
    bool has_model = false;
  };
  const std::vector<Joiner>& joiners() const { return joiners_; }
  bool gave_up() const { return !abort_reason_.empty(); }
  const std::string& abort_reason() const { return abort_reason_; }
  // The first round nobody has started yet.
  int next_unstarted_round() const { return highest_round_started_ + 1; }

  // The coordinator's decisions. A rebuild ends every pending switch (joiners not in
  // `next` are re-admitted by the coordinator).
  void rebuild(std::shared_ptr<CommGroup> next);
  // `joiner` joins `next` (the current group and it) at `round`; a joiner admitted for
  // the same round before it joins too.
  void admit(int round, int joiner, std::shared_ptr<CommGroup> next);
  void give_up(std::string reason);

  // A worker starts `round`; true when nobody had started it before.
  bool announce_round(int round);
  // The joiner `world` has the model: from now on it is a member like the others.
  void model_received(int world);

private:
  std::vector<std::shared_ptr<CommGroup>> groups_;  // by epoch
  std::vector<Switch> switches_;                    // by round, pending
  std::vector<Joiner> joiners_;                     // admitted since the last rebuild
  std::string abort_reason_;
  int highest_round_started_ = -1;
};

}  // namespace collsim
