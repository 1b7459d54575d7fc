// The detector's progress evidence (the straggler rule, docs/recovery.md): the pace of
// each completed transfer, gathered by step; each rank's window of steps and its score
// against the group's median; slow pairs; the capacity that slow transfers imply of a
// rank's own links; keeping a straggler. The waits themselves: recovery/detector.cpp.
#include <algorithm>
#include <limits>

#include "recovery/detector.hpp"

namespace collsim {

// The pace of the transfer that just completed (in `took` seconds) joins the rank's current
// step (a new label opens a new step); the window keeps the last straggler_window steps.
void Detector::record_pace(int world, double took) {
  RankActivity& rank = activity(world);
  const double pace = took > 0 && rank.expected > 0 ? std::min(1.0, rank.expected / took) : 1.0;
  if (rank.receive) {
    if (rank.round != rank.counted_round) {
      rank.receives_before = rank.round == rank.counted_round + 1 ? rank.receives : 0;
      rank.receives = 0;
      rank.counted_round = rank.round;
    }
    ++rank.receives;
  }
  const StepPace* last = rank.steps.latest();
  const bool same_step = last != nullptr && last->phase == rank.phase && last->step == rank.step && last->round == rank.round;
  StepPace& current = same_step ? rank.steps.current() : rank.steps.open(window());
  if (!same_step) {
    current.phase = rank.phase;
    current.step = rank.step;
    current.round = rank.round;
    current.best = 0;
    // Looked up once per step: the label table is larger than a cache, a lookup a miss.
    current.label = &rank.steps.label(rank.phase, rank.step);
  }
  current.best = std::max(current.best, pace);
  current.peers.push_back(rank.peer);
  LabelPace& label = *current.label;
  if (label.round != rank.round) {
    label.before = std::max(label.before, label.this_round);
    label.this_round = 0;
    label.receive_before = std::max(label.receive_before, label.receive_this_round);
    label.receive_this_round = 0;
    label.round = rank.round;
  }
  label.this_round = std::max(label.this_round, current.best);
  // The first time (the epoch's first round), against the expected time alone: a slowdown
  // there from the start (a NIC 2.5x slower from round 0) was otherwise never scored.
  current.relative = label.before > 0 ? std::min(1.0, current.best / label.before) : current.best;
  if (rank.own_link >= 0 && (label.before > 0 ? pace / label.before : pace) < run_.scenario->recovery.straggler_threshold)
    note_capacity(rank, rank.bytes / std::max(took - rank.own_latency, 1e-3 * took));
  if (rank.receive) check_slow_pair(rank, label, pace);
  check_straggler(world);
}

// A step's best pace hides a slow receive behind a fast send (a GPU that receives across
// its NIC and sends through NVLink): the receive is judged alone too, against the same
// step's receives in earlier rounds. Slow from the same peer straggler_window times in a
// row, with no deadline passed, it is a slow pair: reported for the coordinator's probes
// (rule 5b), once per group.
void Detector::check_slow_pair(RankActivity& rank, LabelPace& label, double pace) {
  label.receive_this_round = std::max(label.receive_this_round, pace);
  const bool slow = label.receive_before > 0 && pace < run_.scenario->recovery.straggler_threshold * label.receive_before;
  if (!slow || rank.peer != rank.slow_from) rank.slow_receives = 0;
  rank.slow_from = slow ? rank.peer : -1;
  if (slow) rank.slow_pace = pace / label.receive_before;
  if (slow && ++rank.slow_receives >= static_cast<int>(window()) && !rank.slow_pair_reported)
    rank.report_slow_pair = rank.slow_pair_reported = true;
}

// A rank whose score falls below the threshold (relative to the group's median) reports
// once, when it begins its next step: a collective's last step is then over for it, and
// the coordinator finds it in the next round, not redoing one that completed. It may
// report again after its score has recovered.
void Detector::check_straggler(int world) {
  RankActivity& rank = activity(world);
  const double threshold = run_.scenario->recovery.straggler_threshold;
  // The score is the best relative pace of the window: the step just recorded at or above
  // the threshold settles it (the common case costs no loop).
  if (rank.steps.current().relative >= threshold) {
    rank.straggling = false;
    return;
  }
  const double mine = score(world);
  // Paces are at most 1, and so is the median: a score at or above the threshold is never
  // below threshold x median (the common case costs no median).
  if (mine < 0 || mine >= threshold) {
    rank.straggling = false;
    return;
  }
  const double median = median_score(membership_.current().members());
  const bool below = mine < threshold * median;
  if (below && !rank.straggling) rank.report_straggler = true;
  rank.straggling = below;
}

double Detector::score(int world) const {
  const RankActivity& rank = activity(world);
  if (!rank.steps.full(window())) return -1;
  double best = 0;
  for (const StepPace& step : rank.steps.steps()) best = std::max(best, step.relative);
  return best;
}

double Detector::median_score(const std::vector<int>& members) const {
  std::vector<double> scores;
  for (int world : members)
    if (const double mine = score(world); mine >= 0) scores.push_back(mine);
  if (scores.empty()) return -1;
  const auto middle = scores.begin() + static_cast<std::ptrdiff_t>(scores.size() / 2);
  std::nth_element(scores.begin(), middle, scores.end());
  return *middle;
}

std::vector<int> Detector::stragglers(const std::vector<int>& members) const {
  std::vector<int> out;
  const double median = median_score(members);
  const double threshold = run_.scenario->recovery.straggler_threshold;
  for (int world : members)
    if (const double mine = score(world); mine >= 0 && mine < threshold * median) out.push_back(world);
  return out;
}

std::vector<int> Detector::window_peers(int world) const {
  std::vector<int> peers;
  for (const StepPace& step : activity(world).steps.steps()) step.peers.append_to(peers);
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return peers;
}

double Detector::collective_done(int world) const {
  const RankActivity& rank = activity(world);
  if (rank.counted_round != rank.round || rank.receives_before <= 0) return 0;
  return std::min(1.0, static_cast<double>(rank.receives) / static_cast<double>(rank.receives_before));
}

void Detector::new_epoch() {
  for (int world = 0; world < static_cast<int>(ranks_.size()); ++world) {
    forget_progress(world);
    RankActivity& rank = activity(world);
    rank.paced_late.judged = true;  // evidence of the abandoned group
    rank.steps.clear_labels();
    rank.counted_round = -1;
    rank.receives = rank.receives_before = 0;
  }
}

size_t Detector::window() const { return static_cast<size_t>(run_.scenario->recovery.straggler_window); }

StepPace& StepWindow::open(size_t window) {
  if (steps_.size() < window) {
    steps_.emplace_back();
    last_ = steps_.size() - 1;
  } else {
    last_ = (last_ + 1) % steps_.size();
  }
  StepPace& step = steps_[last_];
  step.peers.clear();  // keeps its capacity
  step.relative = 1;
  return step;
}

LabelPace& StepWindow::label(const char* phase, int step) {
  const size_t index = static_cast<size_t>(std::max(0, step));
  if (phase == phase_ && index < entry_count_) return entries_[index];
  if (phase != phase_) {
    auto it = std::find_if(labels_.begin(), labels_.end(), [phase](const auto& entry) { return entry.first == phase; });
    if (it == labels_.end()) it = labels_.insert(labels_.end(), {phase, {}});
    phase_ = phase;
    by_step_ = &it->second;  // valid until labels_ grows: a new phase looks it up again
  }
  if (index >= by_step_->size()) by_step_->resize(index + 1);
  entries_ = by_step_->data();
  entry_count_ = by_step_->size();
  return entries_[index];
}

// A slow transfer of `rank` ran at `rate` (bytes/s) through its own link with its other
// transfers there: that link carried them all.
void Detector::note_capacity(RankActivity& rank, double rate) {
  const double capacity = rate * rank.own_flows / bandwidth_factor_;
  for (auto& [link, least] : rank.slow_capacity)
    if (link == rank.own_link) {
      least = std::min(least, capacity);
      return;
    }
  rank.slow_capacity.emplace_back(rank.own_link, capacity);
}

double Detector::slow_capacity(int world, int link) const {
  for (const auto& [known, capacity] : activity(world).slow_capacity)
    if (known == link) return capacity;
  return std::numeric_limits<double>::infinity();
}

void Detector::keep(int world, double tolerance) {
  RankActivity& rank = activity(world);
  if (tolerance <= rank.tolerance) return;
  if (rank.doing == RankActivity::Doing::waiting) rank.expected *= tolerance / rank.tolerance;
  rank.tolerance = tolerance;
}

void Detector::forget_progress(int world) {
  RankActivity& rank = activity(world);
  rank.steps.clear();
  rank.slow_capacity.clear();
  rank.straggling = rank.report_straggler = false;
  rank.slow_from = -1;
  rank.slow_receives = 0;
  rank.report_slow_pair = rank.slow_pair_reported = false;
}

}  // namespace collsim
