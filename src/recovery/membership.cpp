#include "recovery/membership.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace collsim {

void Membership::start(std::shared_ptr<CommGroup> first) {
  if (!groups_.empty()) throw std::logic_error("Membership::start: the run already has a group");
  groups_.push_back(std::move(first));
}

const Membership::Switch* Membership::switch_at(int round) const {
  for (const Switch& pending : switches_)
    if (pending.round == round) return &pending;
  return nullptr;
}

bool Membership::awaiting_model(int world) const {
  return std::any_of(joiners_.begin(), joiners_.end(),
                     [world](const Joiner& joiner) { return joiner.world == world && !joiner.has_model; });
}

void Membership::rebuild(std::shared_ptr<CommGroup> next) {
  groups_.push_back(std::move(next));
  switches_.clear();
  joiners_.clear();
}

void Membership::admit(int round, int joiner, std::shared_ptr<CommGroup> next) {
  groups_.push_back(next);
  joiners_.push_back({joiner, round, false});
  auto same = std::find_if(switches_.begin(), switches_.end(), [round](const Switch& s) { return s.round == round; });
  if (same == switches_.end()) same = switches_.insert(switches_.end(), Switch{round, {}, -1, nullptr});
  same->joiners.push_back(joiner);
  same->group = std::move(next);
  // The root: the first member that has the model (every member but the joiners waiting for it).
  same->root = -1;
  for (int world : same->group->members())
    if (!awaiting_model(world)) {
      same->root = world;
      break;
    }
  if (same->root < 0) throw std::logic_error("Membership::admit: nobody in the group has the model");
}

void Membership::give_up(std::string reason) {
  if (abort_reason_.empty()) abort_reason_ = std::move(reason);
}

bool Membership::announce_round(int round) {
  if (round <= highest_round_started_) return false;
  highest_round_started_ = round;
  return true;
}

void Membership::model_received(int world) {
  for (Joiner& joiner : joiners_)
    if (joiner.world == world) joiner.has_model = true;
}

}  // namespace collsim
