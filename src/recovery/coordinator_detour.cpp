// A GPU kept when only its NIC fails (docs/recovery.md, "A GPU kept when only its NIC
// fails"; issue #48 item 5). On rail:N:G and the DGX presets every GPU has a NIC of its
// own and reaches its node mates over NVLink: a GPU whose NIC is slow or down can still
// compute and talk to its node, and its traffic to other nodes can leave and enter through
// a node mate's NIC, as NCCL's PXN sends through the NIC on the receiver's rail. NCCL itself
// would abort here; a runtime that detours the traffic keeps every worker.
#include "recovery/coordinator_impl.hpp"

namespace collsim::coordination {

namespace {

bool crosses_any(const std::vector<int>& route, const std::vector<int>& halves) {
  return std::any_of(route.begin(), route.end(),
                     [&](int id) { return std::find(halves.begin(), halves.end(), id) != halves.end(); });
}

}  // namespace

// The route cache ids of `links`, in their order (-1: a link no route read so far crosses).
std::vector<int> Coordinator::network_ids(const std::vector<LinkRef>& links) const {
  std::vector<int> ids(links.size(), -1);
  for (size_t id = 0; id < run_.network().link_count(); ++id)
    for (size_t i = 0; i < links.size(); ++i)
      if (engine_.link(static_cast<int>(id)) == links[i]) ids[i] = static_cast<int>(id);
  return ids;
}

bool Coordinator::nic_down(const NicDetour& detour) const {
  return std::any_of(detour.nic.begin(), detour.nic.end(), [&](LinkRef half) { return !engine_.link_up(half); });
}

// Whether `world`'s NIC (`detour.nic`) explains what the judgement found: the
// NIC is down, or every late transfer of this epoch with `world` at an end crossed it (a
// probe across it named it, when there were none). Not a computation: a GPU late computing
// is no NIC's fault; nor a certain judgement with the NIC up (a host down, a switch link
// down further on: the NIC is fine, and calling it slow blamed the GPU for the fabric).
// A wrong call costs one redo: a detoured GPU still late is judged again, and with its NIC
// detoured already, dropped as before.
bool Coordinator::nic_explains(int world, const NicDetour& detour, const Judgement& judgement) const {
  if (judgement.compute_bound || detour.nic.empty()) return false;
  if (nic_down(detour)) return true;
  if (judgement.certain) return false;
  const std::vector<int> nic = network_ids(detour.nic);
  const Network& routes = run_.network();
  for (auto [from, to] : late_flows_seen())
    if ((from == world || to == world) && !crosses_any(routes.route(from, to).links, nic)) return false;
  return true;
}

// How much `relay`'s NIC would carry once `world`'s traffic to other nodes goes through
// it: per half, the algorithm's pairs (in the group's order) whose routes cross it, plus
// `world`'s own pairs that would; the more loaded half's count, then the two halves' sum.
std::pair<int, int> Coordinator::relay_load(int world, int relay) const {
  const std::vector<int>& members = membership_.current().members();
  const int p = static_cast<int>(members.size());
  RankPairs pairs;
  if (run_.algorithm != nullptr && run_.algorithm->partners != nullptr)
    pairs = run_.algorithm->partners(p, root_in_group(run_.scenario->collective.root, p),
                                     servers_in_group(run_.model.servers, p));
  const Network& routes = run_.network();
  const std::vector<int> own = network_ids(engine_.nic_detour(world).nic);  // its NIC: up, down
  const std::vector<int> nic = network_ids(engine_.nic_detour(relay).nic);
  auto on = [](const std::vector<int>& route, int half) {
    return half >= 0 && std::find(route.begin(), route.end(), half) != route.end();
  };
  std::array<int, 2> load{0, 0};  // its NIC's up and down halves
  std::vector<int> route;
  for (auto [a, b] : pairs)
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      const int x = members[static_cast<size_t>(from)], y = members[static_cast<size_t>(to)];
      routes.read_links(x, y, route);
      if (on(route, nic[0]) || (x == world && on(route, own[0]))) ++load[0];
      if (on(route, nic[1]) || (y == world && on(route, own[1]))) ++load[1];
    }
  return {std::max(load[0], load[1]), load[0] + load[1]};
}

// The node mate each root's traffic goes through, and the group's collective with those
// detours taken, priced on the routes they would give (RunFacts::network read with the
// detours in place, then undone): a mate's NIC shared with its own traffic, and the NVLink
// ports and rail uplinks a mate adds, are in the price. Root by root (the ones before it
// detoured), the mate whose detour gives the least time; among equal times the one whose
// NIC the algorithm's pairs load least (relay_load), then the first. A ring on dgx-h100:4
// enters node 0 through GPU 0's NIC from GPU 7 of node 3: through GPU 7's NIC (the same
// rail) it crosses no rail uplink, 5 us, and the ring's steps keep their 8 us; through
// GPU 1's, 9 us.
double Coordinator::detoured_model(const std::vector<int>& roots, std::vector<int>& relays) {
  relays.clear();
  std::vector<std::pair<int, int>> detours;
  double least = platform_model(membership_.current());
  for (int root : roots) {
    std::vector<std::pair<std::pair<int, int>, int>> candidates;  // (load, relay)
    for (int relay : engine_.nic_detour(root).relays)
      if (std::find(roots.begin(), roots.end(), relay) == roots.end())
        candidates.push_back({relay_load(root, relay), relay});
    if (candidates.empty()) return -1;
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    int best = -1;
    for (const auto& [load, relay] : candidates) {
      detours.emplace_back(root, relay);
      const double seconds =
          engine_.priced_with_detours(detours, [&] { return platform_model(membership_.current()); });
      detours.pop_back();
      // (equal within rounding: the less loaded, earlier in the order, stays)
      if (best < 0 || seconds < least * (1 - 1e-12)) {
        best = relay;
        least = seconds;
      }
    }
    detours.emplace_back(root, best);
    relays.push_back(best);
  }
  return least;
}

// The roots whose own NIC explains the judgement and that a node mate's NIC can stand in
// for: detoured and kept (nic_explains). When none is left to drop, the same members redo
// the collective under way in a new epoch (their broken or late transfers are abandoned).
// The rule says who was kept, and through whom. False when no root was.
bool Coordinator::detour_nics(Judgement& judgement) {
  std::vector<int> kept, dropped, detourable;
  std::vector<std::string> how;
  for (int root : judgement.roots) {
    const NicDetour detour = engine_.nic_detour(root);
    const bool can = !detour.relays.empty() && engine_.host_up(root) && still_runs(root) &&
                     nic_explains(root, detour, judgement);
    (can ? detourable : dropped).push_back(root);
  }
  // The mates priced (detour_priced, every root detourable), else chosen now for the detourable.
  std::vector<int> relays = judgement.relays;
  if (detourable != judgement.roots || relays.size() != detourable.size())
    if (detoured_model(detourable, relays) < 0) {
      detourable.clear();
      dropped = judgement.roots;
    }
  for (size_t i = 0; i < detourable.size(); ++i) {
    const int root = detourable[i], relay = relays[i];
    const NicDetour detour = engine_.nic_detour(root);
    const bool down = nic_down(detour);
    engine_.detour_nic(root, relay);
    kept.push_back(root);
    how.push_back(fmt::format("{}'s NIC {} is {}: it stays, its traffic to other nodes through {}'s NIC over NVLink",
                              root, physical_link(engine_.link_name(detour.nic.front())), down ? "down" : "slow",
                              relay));
    // Its routes changed, and with the control host's, every member's way to it.
    for (auto& route : heartbeat_routes_) route.first = false;
  }
  if (kept.empty()) return false;
  // The control host's lost link was a kept GPU's NIC: its verdicts now leave through the mate's.
  if (std::find(kept.begin(), kept.end(), run_.control_rank) != kept.end()) {
    judgement.coordinator_cut = false;
    own_links_.clear();
  }
  judgement.roots = dropped;
  judgement.kept = kept;
  judgement.redo = true;
  judgement.rule += fmt::format("; {}", fmt::join(how, "; "));
  return true;
}

// The detour's price beside keeping's and dropping's (dropping_pays), when every root can
// take one: the same workers, the verdicts, a redo of the collective under way and the
// rounds left at the pace of the routes the detours give (detoured_model: T_d(p), the mates'
// NICs shared with their own traffic): detour = verdict + T_d(p) + (R - 1)(c + T_d(p)).
// The mates priced are the ones taken (Judgement::relays). False when some root cannot.
bool Coordinator::detour_priced(Judgement& judgement, int remaining) {
  if (judgement.roots.empty()) return false;
  for (int root : judgement.roots) {
    const NicDetour detour = engine_.nic_detour(root);
    if (detour.relays.empty() || !engine_.host_up(root) || !still_runs(root) || !nic_explains(root, detour, judgement))
      return false;
  }
  const std::vector<int>& members = membership_.current().members();
  const double collective = detoured_model(judgement.roots, judgement.relays);
  if (collective < 0) return false;
  const double later = std::max(0, remaining - 1);
  const double seconds = verdict_seconds(run_) + collective + later * (compute_seconds(run_) + collective);
  add_choice(judgement.prices, "detour", seconds, static_cast<int>(members.size()));
  return true;
}

// A certain judgement (a NIC down breaks the GPU's transfers, or cuts it off from the
// control host on another node) drops without a price; with a detour at hand it is priced
// too, dropping against the detour, and the detour taken when it does more useful work.
// Nothing changes (no prices) where no root can take one.
void Coordinator::detour_certain(Judgement& judgement) {
  if (judgement.roots.empty()) return;
  for (int root : judgement.roots)
    if (engine_.nic_detour(root).relays.empty()) return;  // (no price computed where no detour exists)
  const Prediction prediction = predict(judgement);
  const int p = static_cast<int>(membership_.current().members().size());
  judgement.prices = decision_prices(run_, prediction.remaining);
  add_choice(judgement.prices, "drop", prediction.drop, p - static_cast<int>(judgement.roots.size()));
  if (!detour_priced(judgement, prediction.remaining)) {
    judgement.prices = DecisionPrices{};
    return;
  }
  if (choose(judgement.prices) == "detour") detour_nics(judgement);
}

}  // namespace collsim::coordination
