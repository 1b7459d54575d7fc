#include "comm/message_log.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>
#include <tuple>

namespace collsim {

size_t MessageLog::StepKeyHash::operator()(const StepKey& k) const {
  uint64_t h = static_cast<uint32_t>(k.step);
  h = h * 0x9E3779B97F4A7C15ULL + static_cast<uint32_t>(k.phase);
  h = h * 0x9E3779B97F4A7C15ULL + static_cast<uint32_t>(k.epoch);
  h = h * 0x9E3779B97F4A7C15ULL + static_cast<uint32_t>(k.round);
  h = h * 0x9E3779B97F4A7C15ULL + static_cast<uint32_t>(k.bucket);
  return static_cast<size_t>(h ^ (h >> 29));
}

uint64_t MessageLog::post(double time) {
  open_.push_back(time);
  return first_open_ + open_.size() - 1;
}

// Phases are string literals: the same name may come from two files, so names are
// compared when the pointer is new.
int MessageLog::phase_id(const char* phase) {
  for (size_t i = 0; i < phases_.size(); ++i)
    if (phases_[i] == phase) return static_cast<int>(i);
  for (size_t i = 0; i < phases_.size(); ++i)
    if (std::strcmp(phases_[i], phase) == 0) return static_cast<int>(i);
  phases_.push_back(phase);
  return static_cast<int>(phases_.size() - 1);
}

// The messages of a step arrive one after another: the last step found is tried first.
StepTotals& MessageLog::step_of(const MessageRecord& m) {
  if (!steps_.empty() && last_key_.step == m.step && last_key_.round == m.round && last_key_.epoch == m.epoch &&
      last_key_.bucket == m.bucket) {
    const char* last_phase = phases_[static_cast<size_t>(last_key_.phase)];
    if (last_phase == m.phase || std::strcmp(last_phase, m.phase) == 0) return steps_[last_step_];
  }
  const StepKey key{m.round, m.epoch, phase_id(m.phase), m.step, m.bucket};
  auto found = step_index_.find(key);
  if (found == step_index_.end()) {
    found = step_index_.emplace(key, static_cast<uint32_t>(steps_.size())).first;
    steps_.push_back({m.round, m.epoch, m.step, phases_[static_cast<size_t>(key.phase)], 0, 0, m.start, m.end, m.bucket});
  }
  last_key_ = key;
  last_step_ = found->second;
  return steps_[last_step_];
}

void MessageLog::add(const MessageRecord& m, uint64_t ticket, double now) {
  ++count_;
  if (kept_.size() < limit_) kept_.push_back(m);

  StepTotals& step = step_of(m);
  if (capturing_) {
    ++capture_.count;
    if (capture_.head.size() < limit_) capture_.head.push_back(m);
    if (last_step_ < capture_steps_) capture_.alone = false;
  }
  ++step.count;
  step.bytes += m.bytes;
  step.start = std::min(step.start, m.start);
  step.end = std::max(step.end, m.end);

  const auto highest = static_cast<size_t>(std::max(m.src, m.dst));
  if (ranks_.size() <= highest) ranks_.resize(highest + 1);
  ++ranks_[static_cast<size_t>(m.src)].sent;
  ranks_[static_cast<size_t>(m.src)].bytes_sent += m.bytes;
  ++ranks_[static_cast<size_t>(m.dst)].received;
  ranks_[static_cast<size_t>(m.dst)].bytes_received += m.bytes;

  if (ticket >= first_open_ && ticket - first_open_ < open_.size()) open_[ticket - first_open_] = -1;
  while (!open_.empty() && open_.front() < 0) {
    open_.pop_front();
    ++first_open_;
  }
  if (observer_ != nullptr) observer_->on_message(m, open_.empty() ? now : std::min(now, open_.front()));
}

// Nothing in flight: every message that starts up to `now` included has been recorded.
double MessageLog::settled_after(double now) const {
  return open_.empty() ? std::nextafter(now, std::numeric_limits<double>::infinity()) : std::min(now, open_.front());
}

void MessageLog::begin_capture(double now) {
  if (capturing_) end_capture(now);
  capturing_ = true;
  capture_ = LogCapture{};
  capture_.start = now;
  capture_.alone = open_.empty();
  capture_steps_ = steps_.size();
  capture_ranks_ = ranks_;
  if (observer_ != nullptr) observer_->begin_capture(now, settled_after(now));
}

// The collective's steps are the ones made since it began; its rank totals, what they grew by.
LogCapture MessageLog::end_capture(double now) {
  capturing_ = false;
  LogCapture done = std::move(capture_);
  capture_ = LogCapture{};
  done.end = now;
  done.alone = done.alone && open_.empty();
  done.steps.assign(steps_.begin() + static_cast<std::ptrdiff_t>(capture_steps_), steps_.end());
  done.ranks = ranks_;
  for (size_t r = 0; r < capture_ranks_.size(); ++r) {
    done.ranks[r].sent -= capture_ranks_[r].sent;
    done.ranks[r].received -= capture_ranks_[r].received;
    done.ranks[r].bytes_sent -= capture_ranks_[r].bytes_sent;
    done.ranks[r].bytes_received -= capture_ranks_[r].bytes_received;
  }
  capture_ranks_.clear();
  if (observer_ != nullptr) done.observed = observer_->end_capture(now, settled_after(now));
  return done;
}

void MessageLog::replay(const LogCapture& captured, const ReplayMove& move, double now) {
  count_ += captured.count;
  for (const MessageRecord& message : captured.head) {
    if (kept_.size() >= limit_) break;
    MessageRecord moved = message;
    moved.start += move.shift;
    moved.end += move.shift;
    moved.round = move.round;
    moved.bucket = move.bucket;
    if (moved.first >= 0) moved.first = move.elements_known ? moved.first + move.moved : -1;
    kept_.push_back(moved);
  }
  for (const StepTotals& captured_step : captured.steps) {
    const StepKey key{move.round, captured_step.epoch, phase_id(captured_step.phase), captured_step.step, move.bucket};
    auto found = step_index_.find(key);
    if (found == step_index_.end()) {
      found = step_index_.emplace(key, static_cast<uint32_t>(steps_.size())).first;
      steps_.push_back({move.round, captured_step.epoch, captured_step.step, phases_[static_cast<size_t>(key.phase)], 0, 0,
                        captured_step.start + move.shift, captured_step.end + move.shift, move.bucket});
    }
    StepTotals& step = steps_[found->second];
    step.count += captured_step.count;
    step.bytes += captured_step.bytes;
    step.start = std::min(step.start, captured_step.start + move.shift);
    step.end = std::max(step.end, captured_step.end + move.shift);
  }
  last_key_ = StepKey{-1, -1, -1, -1, -1};
  if (ranks_.size() < captured.ranks.size()) ranks_.resize(captured.ranks.size());
  for (size_t r = 0; r < captured.ranks.size(); ++r) {
    ranks_[r].sent += captured.ranks[r].sent;
    ranks_[r].received += captured.ranks[r].received;
    ranks_[r].bytes_sent += captured.ranks[r].bytes_sent;
    ranks_[r].bytes_received += captured.ranks[r].bytes_received;
  }
  if (observer_ != nullptr && captured.observed) observer_->replay(*captured.observed, move.shift, settled_after(now));
}

std::vector<StepTotals> MessageLog::steps() const {
  std::vector<StepTotals> ordered = steps_;
  auto key = [](const StepTotals& s) { return std::tuple(s.start, s.round, s.epoch, std::string_view(s.phase), s.step, s.bucket); };
  std::sort(ordered.begin(), ordered.end(), [&](const StepTotals& a, const StepTotals& b) { return key(a) < key(b); });
  return ordered;
}

}  // namespace collsim
