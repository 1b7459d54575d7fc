#pragma once
// Verifies every collective of a parallel step on real data: each rank deposits its result
// when its part is done; once every rank of the group has, the group's results are checked
// against the inputs (sim/verify.hpp) and dropped, so that a step of thousands of collectives
// holds only those still in flight.
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "comm/buffer.hpp"
#include "sim/verify.hpp"

namespace collsim {

// One collective of one group, once every member is done: when it ran (its first member
// in, its last member out) and its check. A step's trace lists them (parallel.step.runs).
struct CollectiveRun {
  int communicator = 0, group = 0, sequence = 0;
  Collective kind = Collective::allreduce;
  double start = 0, end = 0;
  bool verified = true;
  double max_error = 0;
  int checked_ranks = 0;
};

class GroupVerifier {
public:
  // Rank `group_rank` of the group `members` (world ranks) ended collective `sequence` of
  // communicator `communicator`, group `group`, from `start` to `end`; every rank's input was
  // fill_input(sum, seed).
  void deposit(int communicator, int group, int sequence, Collective kind, const std::vector<int>& members, int group_rank,
               Buffer result, uint64_t seed, double start, double end);
  // A point-to-point message checked by its receiver: whether it held what the sender sent.
  void message(bool intact);

  const Verification& merged() const { return merged_; }
  uint64_t verified_collectives() const { return collectives_; }
  uint64_t verified_messages() const { return messages_; }
  // Collectives some rank has not finished (a stalled step).
  size_t pending() const { return pending_.size(); }
  // Forgets the collectives in flight with a member in `gone` ([world rank]: non-zero), whose
  // group left or is rebuilt: they are abandoned, not verified. Returns how many.
  size_t abandon(const std::vector<char>& gone);
  uint64_t abandoned() const { return abandoned_; }
  // Each collective verified, in the order they completed (at most max_runs kept).
  std::vector<CollectiveRun>& runs() { return runs_; }
  static constexpr size_t max_runs = 200000;

private:
  struct Pending {
    std::vector<Buffer> results;
    std::vector<int> members;
    int left = 0;
    double start = 0, end = 0;
  };
  std::map<std::tuple<int, int, int>, Pending> pending_;
  Verification merged_;
  uint64_t collectives_ = 0, messages_ = 0, abandoned_ = 0;
  std::vector<CollectiveRun> runs_;
};

}  // namespace collsim
