#include "sim/membership.hpp"

#include <stdexcept>
#include <utility>

namespace collsim {

void Membership::start(std::shared_ptr<CommGroup> first) {
  if (!groups_.empty()) throw std::logic_error("Membership::start: the run already has a group");
  groups_.push_back(std::move(first));
}

void Membership::rebuild(std::shared_ptr<CommGroup> next) { groups_.push_back(std::move(next)); }

void Membership::admit(int round, int joiner, std::shared_ptr<CommGroup> next) {
  groups_.push_back(next);
  switch_ = {round, joiner, std::move(next)};
}

void Membership::give_up(std::string reason) {
  if (abort_reason_.empty()) abort_reason_ = std::move(reason);
}

bool Membership::announce_round(int round) {
  if (round <= highest_round_started_) return false;
  highest_round_started_ = round;
  return true;
}

}  // namespace collsim
