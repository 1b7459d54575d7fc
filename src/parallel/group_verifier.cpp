#include "parallel/group_verifier.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "plan/input_data.hpp"

namespace collsim {

void GroupVerifier::deposit(int communicator, int group, int sequence, Collective kind, const std::vector<int>& members,
                            int group_rank, Buffer result, uint64_t seed, double start, double end) {
  Pending& pending = pending_[{communicator, group, sequence}];
  if (pending.results.empty()) {
    pending.results.resize(members.size());
    pending.members = members;
    pending.left = static_cast<int>(members.size());
    pending.start = start;
  }
  pending.start = std::min(pending.start, start);
  pending.end = std::max(pending.end, end);
  pending.results[static_cast<size_t>(group_rank)] = std::move(result);
  if (--pending.left > 0) return;
  const Verification one = verify_results(kind, OpKind::sum, 0, pending.results, [&](int rank, Buffer& buf) {
    fill_input(buf, members[static_cast<size_t>(rank)], OpKind::sum, seed);
  });
  if (runs_.size() < max_runs)
    runs_.push_back({communicator, group, sequence, kind, pending.start, pending.end, one.verified, one.max_error,
                     static_cast<int>(one.checked_ranks)});
  pending_.erase({communicator, group, sequence});
  ++collectives_;
  merged_.checked_ranks += one.checked_ranks;
  merge_verification(merged_, one, fmt::format("{} of group {} (its collective {})", collective_name(kind), group, sequence));
}

size_t GroupVerifier::abandon(const std::vector<char>& gone) {
  size_t count = 0;
  for (auto it = pending_.begin(); it != pending_.end();) {
    const std::vector<int>& members = it->second.members;
    if (std::any_of(members.begin(), members.end(), [&](int world) { return gone[static_cast<size_t>(world)] != 0; })) {
      it = pending_.erase(it);
      ++count;
    } else {
      ++it;
    }
  }
  abandoned_ += count;
  return count;
}

void GroupVerifier::message(bool intact) {
  ++messages_;
  if (intact || !merged_.verified) return;
  merged_.verified = false;
  merged_.failure = "a pipeline message arrived with other data than its sender sent";
}

}  // namespace collsim
