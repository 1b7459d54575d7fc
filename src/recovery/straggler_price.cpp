#include "recovery/straggler_price.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "algorithms/collective.hpp"
#include "comm/comm_group.hpp"
#include "model/cost_model.hpp"
#include "model/network.hpp"
#include "model/route_cache.hpp"
#include "recovery/detector.hpp"
#include "recovery/events.hpp"
#include "training/iteration.hpp"

namespace collsim {

double compute_seconds(const RunFacts& run) {
  const auto& training = run.scenario->training;
  if (training.has_layers()) {
    const PassSeconds pass = pass_seconds(training.layers);
    return pass.forward + pass.backward;
  }
  return training.compute + training.compute_flops / run.host_speed;
}

double verdict_seconds(const RunFacts& run) {
  return run.model.alpha + static_cast<double>(control_message_bytes) / run.model.bandwidth;
}

std::vector<int> members_without(const std::vector<int>& members, const std::vector<int>& dropped) {
  std::vector<int> rest;
  for (int world : members)
    if (std::find(dropped.begin(), dropped.end(), world) == dropped.end()) rest.push_back(world);
  return rest;
}

std::array<int, 2> end_links(const Network& routes, int end, int other) {
  const std::vector<int>& out = routes.route(end, other).links;
  const std::vector<int>& in = routes.route(other, end).links;
  return {out.empty() ? -1 : out.front(), in.empty() ? -1 : in.back()};
}

double narrowest(const Network& network, int a, int b) {
  double least = std::numeric_limits<double>::infinity();
  for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}})
    for (int id : network.route(from, to).links) least = std::min(least, network.link(id).bandwidth);
  return least;
}

Prediction StragglerPrices::predict(const Slowness& judgement) const {
  const std::vector<int>& members = membership_.current().members();
  Prediction p;
  p.remaining = run_.scenario->training.rounds - judgement.round;
  const std::vector<int> survivors = members_without(members, judgement.roots);
  const double compute = compute_seconds(run_);
  const double with = platform_model(members);
  const double without_them = platform_model(survivors);
  // A kept root's expected times are stretched by its tolerance: its s is against them.
  const double s = p.slowdown = judgement.slowdown * judgement.tolerance;
  // The roots gate everyone's steps: their own progress is the collective's.
  p.done = judgement.compute_bound ? 0 : 1;
  for (int world : judgement.roots) p.done = std::min(p.done, detector_.collective_done(world));
  const double later = std::max(0, p.remaining - 1);
  // A bound (a probe's, a slow pair's before its probes) priced on the roots' links makes
  // keeping look cheaper than it may be, and keeping is then only deferred, to evidence
  // that some roots never give (hierarchical on dragonfly:4:4:4, rank 63's NIC at 25%: the
  // slow pair was never probed, no decision was recorded, and the group went on 34%
  // slower). As the whole collective x s it is enough to drop.
  const double slowed = judgement.compute_bound ? with
                        : judgement.pace_measured ? slowed_model(members, judgement, s)
                                                  : s * with;
  const double overrun = judgement.compute_over ? 0 : (s - 1) * compute;  // an overrun over is spent either way
  p.keep = judgement.compute_bound ? overrun + with + later * (s * compute + with)
                                   : (1 - p.done) * slowed + later * (compute + slowed);
  p.drop = verdict_seconds(run_) + without_them + later * (compute + without_them);
  return p;
}

DecisionPrices decision_prices(const RunFacts& run, int rounds_left) {
  DecisionPrices prices;
  prices.rounds_left = std::max(1, rounds_left);
  prices.batch = run.scenario->training.batch.value_or(1);
  return prices;
}

void add_choice(DecisionPrices& prices, std::string choice, double seconds, int workers) {
  const double samples = static_cast<double>(prices.rounds_left) * workers * prices.batch;
  prices.choices.push_back({std::move(choice), seconds, workers, seconds > 0 ? samples / seconds : 0});
}

const std::string& choose(DecisionPrices& prices, double margin) {
  if (prices.choices.empty()) return prices.chosen;
  const DecisionPrice* best = &prices.choices.front();
  for (const DecisionPrice& other : prices.choices)
    if (other.samples_per_second * margin > prices.choices.front().samples_per_second &&
        other.samples_per_second > best->samples_per_second)
      best = &other;
  prices.chosen = best->choice;
  return prices.chosen;
}

double StragglerPrices::platform_model(const std::vector<int>& members) const {
  return model_time(*run_.algorithm, run_.model_for(members));
}

double StragglerPrices::healthy_model(const std::vector<int>& members) const {
  ModelInput in = run_.model_for(members);
  in.network = nullptr;
  in.endpoints.clear();
  // parameter servers' processes: endpoints after the members' on the uniform network
  for (size_t s = 0; s < in.switch_endpoints.size(); ++s) in.switch_endpoints[s] = in.p + static_cast<int>(s);
  return model_time(*run_.algorithm, in);
}


// The same with the roots slowed by s (a pace). The root's own links on the routes of its
// late transfers, else of its last steps, are priced at what they carried when measured
// (Detector::implied_capacity, slow_capacity), else at the route's narrowest link / s (a
// device link of nodes:8:8 is 8 times a node NIC: at 1%, the transfers across the NIC ran
// x12, and the device link at 1/12 of its own bandwidth would still outrun the NIC; and s
// is against an expected time that counts the route's sharing, so a shared link's share
// can be below that narrowest / s); its other own links (which is slow, the evidence does
// not say: a GPU's NVLink or its NIC) at 1/s of their bandwidth. Priced on the routes, a slow
// rank gates every step of a ring but only its own transfers of a tree (a device link at
// 40% under the double binary tree on nodes:8:8 cost its rounds nothing; priced as the
// whole collective x s, keeping looked 2.4x slower and the rank was dropped: the 63
// survivors' rounds took 1.6x longer).
double StragglerPrices::slowed_model(const std::vector<int>& members, const Slowness& slow_roots, double s) const {
  const std::vector<int>& roots = slow_roots.roots;
  const Network& network = run_.network();
  std::vector<std::pair<int, double>> bandwidths;
  auto slow = [&](int id, double bandwidth) {
    for (auto& [known, set] : bandwidths)
      if (known == id) {
        set = std::min(set, bandwidth);
        return;
      }
    bandwidths.emplace_back(id, bandwidth);
  };
  for (int root : roots) {
    // The peers of its late transfers (s came from them), else of its last steps (the score).
    std::vector<int> observed;
    // What its own links carried (their rate x its transfers there), where measured.
    std::vector<std::pair<int, double>> measured;
    for (int waiter : slow_roots.late_waiters) {
      const int peer = detector_.activity(waiter).peer;
      if (waiter == root && peer >= 0 && peer != root) observed.push_back(peer);
      if (peer == root && waiter != root) observed.push_back(waiter);
      if (waiter == root || peer == root)
        if (const auto [link, capacity] = detector_.implied_capacity(waiter, root); link >= 0)
          measured.emplace_back(link, capacity);
    }
    if (observed.empty()) observed = detector_.window_peers(root);
    auto capacity_of = [&](int id) {
      double least = detector_.slow_capacity(root, id);
      for (const auto& [link, capacity] : measured)
        if (link == id) least = std::min(least, capacity);
      return least;
    };
    // The widest of their routes' narrowest links: the least slowing that explains s.
    double paced = 0;
    for (int peer : observed) paced = std::max(paced, narrowest(network, root, peer));
    std::vector<int> on_observed;
    for (int peer : observed)
      for (int id : end_links(network, root, peer)) {
        if (id < 0) continue;
        // What it carried when measured (a ring on dragonfly:4:4:4, rank 50's NIC at 25%:
        // its transfers shared a global link, ran x2.35, and the NIC at the route's
        // narrowest link / 2.35 still outran that share: keeping was priced at nothing
        // and cost the rounds 29%); else the narrowest link / s.
        const double capacity = capacity_of(id);
        if (std::isfinite(capacity)) {
          slow(id, std::min(network.link(id).bandwidth, capacity));
        } else if (paced > 0 && std::isfinite(paced)) {
          slow(id, std::min(network.link(id).bandwidth, paced / s));
        } else {
          continue;
        }
        on_observed.push_back(id);
      }
    for (int peer : members)
      if (peer != root)
        for (int id : end_links(network, root, peer))
          if (id >= 0 && std::find(on_observed.begin(), on_observed.end(), id) == on_observed.end())
            slow(id, network.link(id).bandwidth / s);
  }
  if (bandwidths.empty()) return s * healthy_model(members);
  ModelInput in = run_.model_for(members);
  in.network = network_with_bandwidths(in.network, bandwidths);
  return model_time(*run_.algorithm, in);
}

}  // namespace collsim
