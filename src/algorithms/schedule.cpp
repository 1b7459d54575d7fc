#include "algorithms/schedule.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace collsim {
namespace {

// The active FlowBudget of this thread (0: none) and the messages described under it.
thread_local size_t budget_most = 0;
thread_local size_t budget_used = 0;

}  // namespace

FlowBudget::FlowBudget(size_t most) : most_before_(budget_most), used_before_(budget_used) {
  budget_most = most;
  budget_used = 0;
}

FlowBudget::~FlowBudget() {
  budget_most = most_before_;
  budget_used = used_before_;
}


Step& Step::send(int src, int dst, double bytes) {
  if (budget_most > 0 && ++budget_used > budget_most) throw ScheduleTooLarge{budget_most};
  if (static_cast<int>(sent_.size()) <= src) sent_.resize(static_cast<size_t>(src) + 1, 0);
  flows.push_back({src, dst, bytes, sent_[static_cast<size_t>(src)]++});
  return *this;
}

Step& Step::send_ahead(int src, int dst, double bytes) {
  send(src, dst, bytes);
  flows.back().ahead = true;
  return *this;
}

Step& Schedule::step(int repeat) {
  return step_after(steps_.empty() ? std::vector<int>{} : std::vector<int>{last()}, repeat);
}

Step& Schedule::step_after(std::vector<int> after, int repeat) {
  Step& s = steps_.emplace_back();
  s.repeat = repeat;
  s.after = std::move(after);
  return s;
}

bool Schedule::merge_last_if_repeated() {
  if (steps_.size() < 2) return false;
  Step& last = steps_.back();
  Step& before = steps_[steps_.size() - 2];
  if (last.after != std::vector<int>{static_cast<int>(steps_.size()) - 2} || last.flows != before.flows ||
      last.reduced != before.reduced)
    return false;
  before.repeat += last.repeat;
  if (budget_most > 0) budget_used -= std::min(budget_used, last.flows.size());
  steps_.pop_back();
  return true;
}

bool Schedule::merge_last_if_alternating() {
  if (steps_.size() < 3) return false;
  Step& last = steps_.back();
  Step& two_before = steps_[steps_.size() - 3];
  if (last.after != std::vector<int>{static_cast<int>(steps_.size()) - 2} || last.flows != two_before.flows ||
      last.reduced != two_before.reduced || last.fifo != two_before.fifo)
    return false;
  two_before.repeat += last.repeat;
  if (budget_most > 0) budget_used -= std::min(budget_used, last.flows.size());
  steps_.pop_back();
  return true;
}

void Schedule::repeat_step(int index) {
  Step& step = steps_.at(static_cast<size_t>(index));
  if (budget_most > 0 && budget_used + step.flows.size() > budget_most) throw ScheduleTooLarge{budget_most};
  ++step.repeat;
}

void Schedule::then(const Schedule& next) {
  if (estimate_note_.empty()) estimate_note_ = next.estimate_note_;
  rank_by_rank_ = rank_by_rank_ || next.rank_by_rank_;
  // The ends of this schedule: steps nobody waits for.
  std::vector<bool> waited(steps_.size(), false);
  for (const Step& s : steps_)
    for (int a : s.after) waited[static_cast<size_t>(a)] = true;
  std::vector<int> ends;
  for (size_t i = 0; i < steps_.size(); ++i)
    if (!waited[i]) ends.push_back(static_cast<int>(i));
  const int offset = static_cast<int>(steps_.size());
  for (Step s : next.steps_) {
    if (s.after.empty()) s.after = ends;
    else
      for (int& a : s.after) a += offset;
    steps_.push_back(std::move(s));
  }
}

}  // namespace collsim
