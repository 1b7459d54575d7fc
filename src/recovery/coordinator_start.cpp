// Where a rebuilt group starts: every survivor at one instant (issue #48 item 3).
#include "recovery/coordinator_impl.hpp"

namespace collsim::coordination {

// The instant the survivors of `group` (less `dropped` and `postponed`) start the new
// group's collective: when the last of them is expected to have read its verdict (one
// computing, at the end of its computation at its host's nominal speed; any other once the
// verdict has crossed, now + verdict_seconds), or -1: each at once. A rebuilt group is a
// new communicator, whose setup is a collective call (ncclCommInitRank blocks until every
// rank has called it): its first collective starts on every rank together. Each starting
// as it read its verdict, the group kept the offsets of the epoch before: on a 96-rank fat
// tree whose leaf link ran at 5% in round 0, the two ranks across it entered round 1 120 us
// late, read their verdicts 120 us after the others, and every later round's transfers
// ended at as many distinct times as before the regroup: twice the exact solver's steps
// (docs/recovery.md, "Decisions priced in useful work", the CPU budget). Only rounds of one
// computation and one collective: with layers, buckets or servers the rounds have no
// single start.
double Coordinator::start_line(const CommGroup& group, const std::vector<int>& dropped,
                               const std::vector<int>& postponed) const {
  const Scenario& scenario = *run_.scenario;
  if (run_.zero3 || run_.servers > 0 || !scenario.training.layers.empty() || !membership_.joiners().empty())
    return -1;
  double line = engine_.now() + verdict_seconds(run_);
  for (int world : group.members()) {
    if (std::find(dropped.begin(), dropped.end(), world) != dropped.end() ||
        std::find(postponed.begin(), postponed.end(), world) != postponed.end())
      continue;
    const RankActivity& rank = detector_.activity(world);
    if (rank.doing == RankActivity::Doing::computing && rank.compute_tolerance > 0)
      line = std::max(line, rank.since + rank.expected_compute / rank.compute_tolerance);
  }
  return line;
}

}  // namespace collsim::coordination
