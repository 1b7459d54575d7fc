#include "recovery/order_search.hpp"

#include <algorithm>
#include <cstddef>

#include "recovery/place_search.hpp"

namespace collsim {
namespace {

// The pairs of `pairs` that cross under `order`, by index.
std::vector<size_t> crossing(const std::vector<int>& order, const RankPairs& pairs, const OrderSearch& search) {
  std::vector<size_t> found;
  for (size_t i = 0; i < pairs.size(); ++i)
    if (search.crosses(order[static_cast<size_t>(pairs[i].first)], order[static_cast<size_t>(pairs[i].second)]))
      found.push_back(i);
  return found;
}

// The swap search. Each position's pairs are listed once, so a candidate swap of positions
// x and y is judged on the pairs that touch x or y alone: O(degree) per candidate.
class SwapSearch {
public:
  SwapSearch(std::vector<int> order, const RankPairs& pairs, const OrderSearch& search)
      : order_(std::move(order)), pairs_(pairs), search_(search), touching_(order_.size()) {
    for (size_t i = 0; i < pairs_.size(); ++i) {
      touching_[static_cast<size_t>(pairs_[i].first)].push_back(i);
      if (pairs_[i].second != pairs_[i].first) touching_[static_cast<size_t>(pairs_[i].second)].push_back(i);
    }
  }

  // Swaps until no pair crosses; false when no swap removes a crossing pair any more.
  bool run(size_t crossing_pairs) {
    const size_t max_steps = 4 * crossing_pairs + 8;  // each step removes at least one
    for (size_t step = 0; step < max_steps && crossing_pairs > 0; ++step) {
      const std::vector<size_t> now = crossing(order_, pairs_, search_);
      crossing_pairs = now.size();
      if (crossing_pairs == 0) return true;
      const auto [x, y] = best_swap(pairs_[now.front()]);
      if (x == y) return false;
      std::swap(order_[x], order_[y]);
    }
    return crossing(order_, pairs_, search_).empty();
  }

  const std::vector<int>& order() const { return order_; }

private:
  struct Score {
    long crossings = 0;
    long cost = 0;
  };

  // The crossings and cost of the pairs touching positions x or y, under the current order.
  Score score(size_t x, size_t y) const {
    Score total;
    auto add = [&](size_t index) {
      const int a = order_[static_cast<size_t>(pairs_[index].first)];
      const int b = order_[static_cast<size_t>(pairs_[index].second)];
      if (search_.crosses(a, b)) ++total.crossings;
      total.cost += search_.cost(a, b);
    };
    for (size_t index : touching_[x]) add(index);
    for (size_t index : touching_[y])
      if (std::find(touching_[x].begin(), touching_[x].end(), index) == touching_[x].end()) add(index);
    return total;
  }

  // The swap of an end of `bad` with any other position that removes the most crossings,
  // then costs the least; {0, 0} when none removes one.
  std::pair<size_t, size_t> best_swap(std::pair<int, int> bad) {
    std::pair<size_t, size_t> best{0, 0};
    Score best_change{0, 0};
    for (int end : {bad.first, bad.second}) {
      const auto x = static_cast<size_t>(end);
      for (size_t y = 0; y < order_.size(); ++y) {
        if (y == x || !search_.may_take(x, y)) continue;
        const Score before = score(x, y);
        std::swap(order_[x], order_[y]);
        const Score after = score(x, y);
        std::swap(order_[x], order_[y]);
        const Score change{after.crossings - before.crossings, after.cost - before.cost};
        if (change.crossings >= 0) continue;
        if (best.first == best.second || change.crossings < best_change.crossings ||
            (change.crossings == best_change.crossings && change.cost < best_change.cost)) {
          best = {x, y};
          best_change = change;
        }
      }
    }
    return best;
  }

  std::vector<int> order_;
  const RankPairs& pairs_;
  const OrderSearch& search_;
  std::vector<std::vector<size_t>> touching_;  // by position: indices of the pairs it is in
};

// Whether every two places are paired: then every order has the same pairs.
bool pairs_everyone(size_t n, const RankPairs& pairs) {
  if (pairs.size() < n * (n - 1) / 2) return false;
  std::vector<char> paired(n * n, 0);
  size_t distinct = 0;
  for (auto [a, b] : pairs) {
    if (a == b) continue;
    const auto lo = static_cast<size_t>(std::min(a, b)), hi = static_cast<size_t>(std::max(a, b));
    if (!paired[lo * n + hi]) {
      paired[lo * n + hi] = 1;
      ++distinct;
    }
  }
  return distinct == n * (n - 1) / 2;
}

bool any_crossing(const std::vector<int>& order, const RankPairs& pairs, const OrderSearch& search) {
  return std::any_of(pairs.begin(), pairs.end(), [&](auto pair) {
    return search.crosses(order[static_cast<size_t>(pair.first)], order[static_cast<size_t>(pair.second)]);
  });
}

// Disjoint sets of positions (union-find, paths halved).
class Sets {
public:
  explicit Sets(size_t n) : parent_(n), sets_(n) {
    for (size_t i = 0; i < n; ++i) parent_[i] = i;
  }
  void join(size_t a, size_t b) {
    const size_t ra = root(a), rb = root(b);
    if (ra == rb) return;
    parent_[rb] = ra;
    --sets_;
  }
  bool joined(size_t a, size_t b) { return root(a) == root(b); }
  size_t count() const { return sets_; }

private:
  size_t root(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  std::vector<size_t> parent_;
  size_t sets_;
};

// Whether some order may avoid the link: when the algorithm's pairs connect every position
// (an allreduce's do: every member's data reaches every other), any order maps them onto
// a connected graph of members, so when the members' clean pairs (those that do not cross)
// fall apart in two sides or more, a pair crosses between sides in every order. Two equal
// racks joined by one link: every ring crosses it twice, and the place search tried its
// 200,000 orders at every judgement (43% of the run's instructions at p = 96). At most
// p^2 / 2 pair checks, fewer when the clean pairs connect early.
bool may_avoid(const std::vector<int>& members, const RankPairs& pairs, const OrderSearch& search) {
  const size_t n = members.size();
  Sets positions(n);
  for (const auto& [a, b] : pairs) positions.join(static_cast<size_t>(a), static_cast<size_t>(b));
  if (positions.count() > 1) return true;
  Sets clean(n);
  for (size_t a = 0; a < n && clean.count() > 1; ++a)
    for (size_t b = a + 1; b < n && clean.count() > 1; ++b)
      if (!clean.joined(a, b) && !search.crosses(members[a], members[b])) clean.join(a, b);
  return clean.count() == 1;
}

// The reversal search (2-opt): reverses the segment of positions that leaves the fewest
// crossing pairs at the least cost, one end of the segment at an end of the first crossing
// pair, while a reversal still removes one. A ring's pairs change at the segment's two
// ends only (inside, the same neighbours run the other way): members that share a router
// stay together, where a swap puts one member among others, and their new pairs share
// links (a ring of 128 on dragonfly:4:4:8 around a slow local link: two of its pairs on
// one link half, rounds 1.59x of fault-free).
class ReversalSearch {
public:
  ReversalSearch(std::vector<int> order, const RankPairs& pairs, const OrderSearch& search)
      : order_(std::move(order)), pairs_(pairs), search_(search), touching_(order_.size()), stamp_(pairs.size(), 0) {
    for (size_t i = 0; i < pairs_.size(); ++i) {
      touching_[static_cast<size_t>(pairs_[i].first)].push_back(i);
      if (pairs_[i].second != pairs_[i].first) touching_[static_cast<size_t>(pairs_[i].second)].push_back(i);
    }
  }

  bool run(size_t crossing_pairs) {
    const size_t max_steps = 4 * crossing_pairs + 8;
    for (size_t step = 0; step < max_steps; ++step) {
      const std::vector<size_t> now = crossing(order_, pairs_, search_);
      if (now.empty()) return true;
      const auto [from, to] = best_reversal(pairs_[now.front()]);
      if (from == to) return false;
      std::reverse(order_.begin() + static_cast<std::ptrdiff_t>(from), order_.begin() + static_cast<std::ptrdiff_t>(to) + 1);
    }
    return crossing(order_, pairs_, search_).empty();
  }

  const std::vector<int>& order() const { return order_; }

private:
  // The crossings and cost of the pairs touching positions [from, to], the segment
  // reversed or not.
  std::pair<long, long> score(size_t from, size_t to, bool reversed) {
    ++round_;
    long crossings = 0, cost = 0;
    auto at = [&](int position) {
      const auto k = static_cast<size_t>(position);
      return order_[reversed && k >= from && k <= to ? from + to - k : k];
    };
    for (size_t k = from; k <= to; ++k)
      for (size_t index : touching_[k]) {
        if (stamp_[index] == round_) continue;
        stamp_[index] = round_;
        const int a = at(pairs_[index].first), b = at(pairs_[index].second);
        crossings += search_.crosses(a, b) ? 1 : 0;
        cost += search_.cost(a, b);
      }
    return {crossings, cost};
  }

  std::pair<size_t, size_t> best_reversal(std::pair<int, int> bad) {
    std::pair<size_t, size_t> best{0, 0};
    std::pair<long, long> best_change{0, 0};
    for (int end : {bad.first, bad.second}) {
      const auto x = static_cast<size_t>(end);
      for (size_t y = 0; y < order_.size(); ++y) {
        if (y == x) continue;
        const size_t from = std::min(x, y), to = std::max(x, y);
        const auto before = score(from, to, false), after = score(from, to, true);
        const std::pair<long, long> change{after.first - before.first, after.second - before.second};
        if (change.first >= 0) continue;
        if (best.first == best.second || change < best_change) {
          best = {from, to};
          best_change = change;
        }
      }
    }
    return best;
  }

  std::vector<int> order_;
  const RankPairs& pairs_;
  const OrderSearch& search_;
  std::vector<std::vector<size_t>> touching_;
  std::vector<unsigned> stamp_;  // by pair: the score() call that counted it last
  unsigned round_ = 0;
};

// The groups of a classed order (OrderSearch::classes), each one run of places: their
// first place and size; empty when a class lies in two runs or the runs' sizes differ (a
// group moved elsewhere would shift the places after it, and the pairs with them).
std::vector<std::pair<size_t, size_t>> group_runs(const std::vector<int>& classes) {
  std::vector<std::pair<size_t, size_t>> runs;
  std::vector<int> seen;
  for (size_t place = 0; place < classes.size(); ++place) {
    if (place > 0 && classes[place] == classes[place - 1]) {
      ++runs.back().second;
      continue;
    }
    if (std::find(seen.begin(), seen.end(), classes[place]) != seen.end()) return {};
    seen.push_back(classes[place]);
    runs.emplace_back(place, 1);
  }
  for (const auto& run : runs)
    if (run.second != runs.front().second) return {};
  return runs;
}

}  // namespace

std::vector<int> order_by_groups(const std::vector<int>& members, const RankPairs& pairs, const OrderSearch& search) {
  const std::vector<std::pair<size_t, size_t>> runs = group_runs(search.classes);
  if (runs.size() < 3 || crossing(members, pairs, search).empty()) return {};
  const size_t size = runs.front().second;
  // The slots' pairs, and the places inside two slots that any of them pairs (both ways).
  RankPairs slot_pairs;
  std::vector<std::pair<size_t, size_t>> pattern;
  for (auto [a, b] : pairs) {
    const auto x = static_cast<size_t>(a) / size, y = static_cast<size_t>(b) / size;
    if (x == y) continue;
    const std::pair<int, int> slots{static_cast<int>(std::min(x, y)), static_cast<int>(std::max(x, y))};
    if (std::find(slot_pairs.begin(), slot_pairs.end(), slots) == slot_pairs.end()) slot_pairs.push_back(slots);
    for (auto inside : {std::pair{static_cast<size_t>(a) % size, static_cast<size_t>(b) % size},
                        std::pair{static_cast<size_t>(b) % size, static_cast<size_t>(a) % size}})
      if (std::find(pattern.begin(), pattern.end(), inside) == pattern.end()) pattern.push_back(inside);
  }
  // Two groups cross when any of those places does, either way: whichever two slots they
  // take, their pairs are among them.
  const size_t groups = runs.size();
  std::vector<signed char> known(groups * groups, -1);
  OrderSearch by_group;
  by_group.last_resort = search.last_resort;
  by_group.max_tries = search.max_tries;
  by_group.crosses = [&](int u, int v) {
    signed char& verdict = known[static_cast<size_t>(u) * groups + static_cast<size_t>(v)];
    if (verdict < 0) {
      verdict = 0;
      for (auto [i, j] : pattern)
        if (search.crosses(members[static_cast<size_t>(u) * size + i], members[static_cast<size_t>(v) * size + j]))
          verdict = 1;
    }
    return verdict == 1;
  };
  by_group.cost = [&](int u, int v) {
    return search.cost(members[static_cast<size_t>(u) * size], members[static_cast<size_t>(v) * size]);
  };
  std::vector<int> ids(groups);
  for (size_t g = 0; g < groups; ++g) ids[g] = static_cast<int>(g);
  const std::vector<int> moved = order_avoiding(ids, slot_pairs, by_group);
  if (moved.empty()) return {};
  std::vector<int> order;
  for (int g : moved)
    order.insert(order.end(), members.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(g) * size),
                 members.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(g + 1) * size));
  return crossing(order, pairs, search).empty() ? order : std::vector<int>{};
}

std::vector<int> order_by_reversals(const std::vector<int>& members, const RankPairs& pairs, const OrderSearch& search) {
  const size_t initially = crossing(members, pairs, search).size();
  // a reversal moves members across groups: the swaps keep them (OrderSearch::classes)
  if (initially == 0 || members.size() < 3 || pairs.size() > 2 * members.size() || !search.classes.empty()) return {};
  if (!may_avoid(members, pairs, search)) return {};
  ReversalSearch reversals(members, pairs, search);
  return reversals.run(initially) ? reversals.order() : std::vector<int>{};
}

std::vector<int> order_avoiding(const std::vector<int>& members, const RankPairs& pairs, const OrderSearch& search) {
  const size_t initially = crossing(members, pairs, search).size();
  if (initially == 0 || members.size() < 2) return {};
  std::vector<int> order = members;
  const int rotations = std::min(static_cast<int>(members.size()), search.max_rotations + 1);
  for (int k = 1; k < rotations && search.classes.empty(); ++k) {  // a rotation moves every member's group
    std::rotate(order.begin(), order.begin() + 1, order.end());
    if (!any_crossing(order, pairs, search)) return order;
  }
  if (pairs_everyone(members.size(), pairs) || !may_avoid(members, pairs, search)) return {};
  SwapSearch swaps(members, pairs, search);
  if (swaps.run(initially)) return swaps.order();
  if (std::vector<int> by_groups = order_by_groups(members, pairs, search); !by_groups.empty()) return by_groups;
  if (!search.last_resort) return {};
  return order_by_places(members, pairs, search);
}

std::vector<int> order_with(const std::vector<int>& members, int joiner, size_t first_try, const RankPairs& pairs,
                            const OrderSearch& search) {
  std::vector<int> best;
  size_t fewest = 0;
  std::vector<size_t> places{std::min(first_try, members.size())};
  for (size_t at = 0; at <= members.size(); ++at)
    if (at != places.front()) places.push_back(at);
  for (size_t at : places) {
    std::vector<int> order = members;
    order.insert(order.begin() + static_cast<std::ptrdiff_t>(at), joiner);
    const size_t crossings = crossing(order, pairs, search).size();
    if (best.empty() || crossings < fewest) {
      best = std::move(order);
      fewest = crossings;
    }
    if (fewest == 0) break;
  }
  return best;
}

}  // namespace collsim
