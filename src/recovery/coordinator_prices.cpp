// The straggler rule's decision (docs/recovery.md, "Drop only when it pays" and "Decisions
// priced in useful work"): drop the roots or keep them, by the samples per second each
// gives over the rounds left, the rebuild's own cost included; a keep recorded with the
// prices it compared, as a drop is.
#include "recovery/coordinator_impl.hpp"

namespace collsim::coordination {

// The straggler rule's prices (recovery/straggler_price.hpp) for the judgement's roots.
Prediction Coordinator::predict(const Judgement& judgement) const {
  Slowness slow;
  slow.roots = judgement.roots;
  slow.slowdown = judgement.slowdown;
  slow.compute_bound = judgement.compute_bound;
  slow.compute_over = judgement.compute_over;
  slow.pace_measured = judgement.pace_measured;
  slow.round = lowest_round(membership_.current(), judgement.roots);
  slow.late_waiters = late_waiters_;
  // What the measure was against: a computation's expectation when it began, a
  // transfer's the root's tolerance now (its window was forgotten when it was kept).
  for (int world : judgement.roots)
    slow.tolerance = std::max(slow.tolerance, judgement.compute_bound ? detector_.compute_tolerance(world)
                                                                      : detector_.activity(world).tolerance);
  return prices_.predict(slow);
}

// Drop only when it pays in useful work: the samples per second of the rounds left
// (workers x batch / time) with the roots and without them, the rebuild included. A
// keep is a decision too, recorded with the prices it compared (keep_recorded).
bool Coordinator::dropping_pays(Judgement& judgement) {
  const CommGroup& group = membership_.current();
  if (members_without(group.members(), judgement.roots).empty()) return true;  // rebuild reports it
  const auto [remaining, done, keep, drop, priced_s] = predict(judgement);
  const double s = judgement.slowdown;
  const int p = static_cast<int>(group.members().size());
  judgement.prices = decision_prices(run_, remaining);
  add_choice(judgement.prices, "keep", keep, p);
  add_choice(judgement.prices, "drop", drop, p - static_cast<int>(judgement.roots.size()));
  // Roots whose transfers run at about their expected pace are late only against a
  // deadline shorter than that pace (a fixed recovery.timeout below a transfer's expected
  // time): dropping them gains no more than the model's change with p (a naive
  // allreduce's root has one partner fewer), which is no culprit's cost. Slower than
  // 1 / straggler_threshold, as the straggler rule asks, or not at all.
  if (!judgement.certain && !at_least(s, 1 / run_.scenario->recovery.straggler_threshold)) {
    judgement.evidence.push_back(fmt::format("x{:.3g} slower is no slower than 1 / straggler_threshold: nobody dropped", s));
    judgement.prices.chosen = "keep";
    prediction_ = {-1, -1};
    keep_recorded(judgement, fmt::format("x{:.3g} slower is no slower than 1 / straggler_threshold", s));
    return false;
  }
  const bool detour = detour_priced(judgement, remaining);
  judgement.evidence.push_back(fmt::format(
      "prediction for {} remaining round(s), {:.3g} of this collective done: keep {:.9g} s (x{:.3g} slower), "
      "drop {:.9g} s{}; {:.6g} against {:.6g}{} samples/s", remaining, done, keep, priced_s, drop,
      detour ? fmt::format(", detour {:.9g} s", judgement.prices.choices[2].seconds) : "",
      judgement.prices.choices[0].samples_per_second, judgement.prices.choices[1].samples_per_second,
      detour ? fmt::format(" against {:.6g}", judgement.prices.choices[2].samples_per_second) : ""));
  prediction_ = {keep, drop};
  const std::string& chosen = choose(judgement.prices);
  if (chosen == "detour") return detour_nics(judgement);
  if (chosen == "drop") return true;
  if (!judgement.pace_measured) {
    // A bound (a probe cut at its deadline, a transfer that has moved nothing): enough to
    // drop, not to keep; whole steps (the next report, the progress score) say more.
    prediction_ = {-1, -1};
    keep_recorded(judgement, "its slowdown is a bound, not a pace: kept until whole steps measure it");
    return false;
  }
  // Keeping pays: its deadlines stretch to its measured pace, and the decision is recorded,
  // once: a late computation is judged again at each check (its s grows; a drop may come),
  // and recorded each time it was kept over 20 times (a host at 30% under the double binary
  // tree on nodes:8:8, 16 MiB).
  bool again = true;
  for (int world : judgement.roots) {
    detector_.keep(world, 1.5 * priced_s);
    detector_.forget_progress(world);  // its steps so far were judged; its new pace is what counts now
    const RankActivity& rank = detector_.activity(world);
    const double computing_since = judgement.compute_bound && !judgement.compute_over ? rank.since : -1;
    auto [at, added] = kept_computing_.try_emplace(world, computing_since);
    again &= !added && computing_since >= 0 && at->second == computing_since;
    at->second = computing_since;
  }
  if (again) return false;
  keeps_recorded_.erase({group.epoch(), judgement.roots});  // a new keep of them: recorded again
  keep_recorded(judgement, keep <= drop ? "keeping is predicted faster than a rebuild"
                                        : "keeping does more useful work than a rebuild (samples/s)");
  return false;
}

// A kept root's entry (nobody dropped, the prices compared), once per epoch and roots.
void Coordinator::keep_recorded(const Judgement& judgement, const std::string& why) {
  const CommGroup& group = membership_.current();
  if (!keeps_recorded_.insert({group.epoch(), judgement.roots}).second) return;
  RecoveryEvent event = event_for(group, judgement);
  event.epoch_after = group.epoch();
  event.round = lowest_round(group, judgement.roots);
  event.kept_ranks = judgement.roots;
  event.group = group.members();
  event.reason = fmt::format("kept rank{} {}: {}, but {}", judgement.roots.size() > 1 ? "s" : "",
                             fmt::join(judgement.roots, ", "), judgement.rule, why);
  decisions_.push_back(event);
}

}  // namespace collsim::coordination
