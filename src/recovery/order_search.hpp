#pragma once
// An order of a group's members whose algorithm pairs avoid a slow link (rule 4a and the
// slow links that no drop takes off the routes, docs/recovery.md). Pure: the routes come
// in as two functions, so that the search is tested without an engine.
#include <functional>
#include <vector>

#include "algorithms/partners.hpp"

namespace collsim {

struct OrderSearch {
  // True when the members `a` and `b` would cross the slow link as a pair (either way).
  std::function<bool(int a, int b)> crosses;
  // What pairing `a` with `b` costs (the links their routes cross): among orders that
  // avoid the link, the search keeps pairs near each other.
  std::function<int(int a, int b)> cost;
  int max_rotations = 64;
  // Whether to end with a search of the orders when no swap removes a crossing pair: for a
  // link down (an order that crosses it cannot finish), not for a slow one (that search
  // ignores the cost of pairs: recursive doubling on torus:4x4x4 with rank 1's NIC at 1%
  // kept 1 in an order 21% slower a round than dropping it, which rule 5c does).
  bool last_resort = false;
  // How many members the last resort may try at a place before it gives up: it is
  // exhaustive, and no order may exist.
  long max_tries = 200000;
  // By index into the members: each member's class (its locality group, for an algorithm
  // whose pairs follow the groups: the hierarchical allreduce, NCCL's rings and trees,
  // channels turned inside the groups). A member takes only a place whose member now is of
  // its class, so every place keeps its group and the pairs, read at the current order,
  // stay the algorithm's: the search chooses which member leads, heads or crosses for its
  // group. Empty: any member anywhere.
  std::vector<int> classes;
  // Whether `member` (index into the members) may take `place` (an index too).
  bool may_take(size_t member, size_t place) const { return classes.empty() || classes[member] == classes[place]; }
};

// `members` reordered so that no pair of `pairs` (positions in the order) crosses the slow
// link. First the rotations of the current order (another member at position 0, a ring
// keeps its neighbours); then, when none avoids it, swaps of two members, each time the swap
// that leaves the fewest crossing pairs at the least cost, while a swap still removes one;
// for a classed order, the groups' order (order_by_groups); when no swap removes one any
// more and `last_resort` is set, searches of the orders (place
// by place, backtracking, each up to max_tries: recovery/place_search.hpp). Empty when the current order avoids the link already, when every order
// has the same pairs (every member pairs with every other), or when the search finds no
// order that does. Deterministic: ties go to the lowest positions.
std::vector<int> order_avoiding(const std::vector<int>& members, const RankPairs& pairs, const OrderSearch& search);

// `members` reordered by reversing segments of the order (2-opt), each time the reversal
// that leaves the fewest crossing pairs at the least cost, while one still removes a
// crossing pair: a ring's pairs change only at a segment's two ends, so members near each
// other stay together. Empty when the current order avoids the link, when no order can
// (may_avoid), when the search ends with a pair still crossing, and for algorithms with
// more than two pairs per member (a segment's pairs all change: the search would cost
// O(p^2) pairs a step). The coordinator prices it against order_avoiding's.
std::vector<int> order_by_reversals(const std::vector<int>& members, const RankPairs& pairs, const OrderSearch& search);

// `members` reordered by moving whole groups (OrderSearch::classes: each group one run of
// places, every group the same size), each keeping its members' order: which groups a
// hierarchical allreduce's ring across the groups, or a ring over the nodes, puts next to
// each other. Two groups may be neighbours when none of the places inside two groups that
// the pairs join crosses the link between their members, either way; the groups' order is
// searched as members are (order_avoiding). Empty when no order of groups avoids the link,
// when the groups are not runs of one size, and when the current order avoids it already.
std::vector<int> order_by_groups(const std::vector<int>& members, const RankPairs& pairs, const OrderSearch& search);

// `members` (an order whose pairs avoid the slow link) with `joiner` added, the others in
// their order: at the first place, `first_try` then 0, 1, ..., where no pair of `pairs` (the
// algorithm's at one more member) crosses; otherwise where the fewest do (the first of
// them). A tree's group ranks after the joiner's place move, so its place is tried rather
// than assumed.
std::vector<int> order_with(const std::vector<int>& members, int joiner, size_t first_try, const RankPairs& pairs,
                            const OrderSearch& search);

}  // namespace collsim
