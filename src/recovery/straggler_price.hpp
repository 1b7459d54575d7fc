#pragma once
// The straggler rule's prices (docs/recovery.md, "Drop only when it pays"): the time to
// finish the rounds left keeping the slow roots, and dropping them, the redone collective
// included.
//   slow transfers:   keep = (1 - f) T_s(p) + (R - 1)(c + T_s(p))   (s a pace)
//                     keep = (1 - f) s T(p) + (R - 1)(c + s T(p))   (s a bound)
//   slow computation: keep = (s - 1) c + T(p) + (R - 1)(s c + T(p))
//   one over:         keep = T(p) + (R - 1)(s c + T(p))   (its overrun is spent either way)
//   either:           drop = verdict + T(p') + (R - 1)(c + T(p'))
// R the rounds left counting the current one, f the fraction of the current collective
// the roots have done (their receives against the round before's), s the measured
// slowdown, c the round's computation, p' the survivors; T the algorithm's model priced on
// the platform's routes with the links as built (the platform's links now would already
// show the fault: the coordinator judges from what it measured), T_s the same with the
// roots' own links slowed (StragglerPrices::slowed_model). A slow computation's s is its
// time so far over c, a lower bound; what is left of it is taken to be its overrun so far,
// (s - 1) c: nothing is known of its end but that it has not come, and waiting as long
// again as it has overrun before dropping costs at most twice the best choice (the
// ski-rental bound). Counting the rest as nothing kept a straggler in the last round for
// ever (keep T(p) < drop). A transfer's s is a pace when it comes from whole steps (the
// progress score) or from late transfers that have moved bytes (their rate so far); a
// probe cut at its deadline, a late transfer that has moved nothing or a slow pair's
// receives before its probes give a bound: enough to drop, not to keep. s is against the
// platform as built: a kept root's, measured against its stretched deadlines, is x its
// tolerance.
#include <array>
#include <vector>

#include "recovery/events.hpp"
#include "recovery/membership.hpp"
#include "recovery/run_facts.hpp"

namespace collsim {

class Detector;
class Network;

// A round's computation at nominal speed (what the coordinator can know: not the faults);
// with layers, forward and backward (backward's overlap with the buckets' collectives left
// out: an upper bound).
double compute_seconds(const RunFacts& run);

// What a verdict takes to reach a member: a control message on the model's route.
double verdict_seconds(const RunFacts& run);

// `members` less `dropped`, in order.
std::vector<int> members_without(const std::vector<int>& members, const std::vector<int>& dropped);

// `end`'s own links on its routes with `other`: the first link out and the last link in
// (route cache ids; -1 for an empty route).
std::array<int, 2> end_links(const Network& routes, int end, int other);

// The narrowest link's bandwidth on the routes between a and b, either way (as built).
double narrowest(const Network& network, int a, int b);

// Decisions priced in useful work (docs/recovery.md): the prices of a decision over
// `rounds_left` rounds (the current one included; at least one), training.batch samples per
// worker and round (1 without it).
DecisionPrices decision_prices(const RunFacts& run, int rounds_left);
// A choice that finishes the rounds left in `seconds` with `workers`: its samples per second
// are rounds left x workers x batch / seconds.
void add_choice(DecisionPrices& prices, std::string choice, double seconds, int workers);
// Takes the choice with the most samples per second. The first choice (keeping as it is)
// stays unless another gives more than 1 / `margin` times its samples per second (a
// regroup must save 10% of the time left: margin 0.9). Returns the one taken.
const std::string& choose(DecisionPrices& prices, double margin = 1);

// What the coordinator measured of the roots it prices.
struct Slowness {
  std::vector<int> roots;
  double slowdown = 1;         // against their expected times (a kept root's are stretched)
  double tolerance = 1;        // how much: slowdown x tolerance is against the platform as built
  bool compute_bound = false;  // late computing, not transferring
  bool compute_over = false;   // ... and its computation is over: only later rounds pay its slowdown
  bool pace_measured = false;  // s a pace (priced on the routes), else a bound
  int round = 0;               // the lowest round a member is in
  std::vector<int> late_waiters;  // members whose transfer was late when judged
};

struct Prediction {
  int remaining = 0;    // rounds left, the current one included
  double done = 0;      // of the current collective, by the roots
  double keep = 0, drop = 0;
  double slowdown = 1;  // against the platform as built (a kept root's s is against its stretched deadlines)
};

class StragglerPrices {
public:
  // It reads the run, the current group and the detector's measures.
  StragglerPrices(const RunFacts& run, const Membership& membership, Detector& detector)
      : run_(run), membership_(membership), detector_(detector) {}

  Prediction predict(const Slowness& roots) const;
  // The collective of a group of `members` priced on the platform's routes as built (the
  // contention model: what a survivor group's placement costs, a tree crossing more node
  // NICs at 63 ranks than at 64 on nodes:8:8), else the alpha-beta model.
  double platform_model(const std::vector<int>& members) const;
  // The alpha-beta model of that group's collective (no routes).
  double healthy_model(const std::vector<int>& members) const;

private:
  double slowed_model(const std::vector<int>& members, const Slowness& roots, double s) const;

  const RunFacts& run_;
  const Membership& membership_;
  Detector& detector_;
};

}  // namespace collsim
