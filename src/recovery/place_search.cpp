#include "recovery/place_search.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace collsim {
namespace {

// Places members one place at a time, the most paired places first, each time the first
// member (the one there now, then the others in their order) none of whose pairs with the
// places filled so far crosses, and takes a member back when a place has none left. Its
// orders stay close to the current one (most members keep their place), which the price
// of a regroup favours. Exhaustive up to OrderSearch::max_tries; a loop, not a recursion
// (the coordinator runs on an actor's small stack).
class InOrderPlaceSearch {
public:
  InOrderPlaceSearch(const std::vector<int>& members, const RankPairs& pairs, const OrderSearch& search)
      : members_(members), pairs_(pairs), search_(search), touching_(members.size()), places_(members.size()),
        at_(members.size(), -1), used_(members.size(), 0) {
    for (size_t i = 0; i < pairs_.size(); ++i) {
      touching_[static_cast<size_t>(pairs_[i].first)].push_back(i);
      if (pairs_[i].second != pairs_[i].first) touching_[static_cast<size_t>(pairs_[i].second)].push_back(i);
    }
    for (size_t place = 0; place < places_.size(); ++place) places_[place] = place;
    std::stable_sort(places_.begin(), places_.end(),
                     [&](size_t a, size_t b) { return touching_[a].size() > touching_[b].size(); });
  }

  bool run() {
    const size_t n = members_.size();
    std::vector<size_t> next(n, 0);  // by depth: the next candidate to try
    long tries = 0;
    size_t depth = 0;
    while (depth < n) {
      const size_t place = places_[depth];
      bool placed = false;
      for (size_t& k = next[depth]; k < n && !placed; ++k) {
        const size_t member = k == 0 ? place : (k - 1 < place ? k - 1 : k);  // the one there now first
        if (used_[member]) continue;
        if (++tries > search_.max_tries) return false;
        if (!fits(place, member)) continue;
        at_[place] = static_cast<long>(member);
        used_[member] = 1;
        placed = true;
      }
      if (placed) {
        ++depth;
        if (depth < n) next[depth] = 0;
        continue;
      }
      if (depth == 0) return false;
      --depth;  // take back the member at the place before and try its next candidate
      used_[static_cast<size_t>(at_[places_[depth]])] = 0;
      at_[places_[depth]] = -1;
    }
    return true;
  }

  std::vector<int> order() const {
    std::vector<int> order(members_.size());
    for (size_t place = 0; place < order.size(); ++place) order[place] = members_[static_cast<size_t>(at_[place])];
    return order;
  }

private:
  bool fits(size_t place, size_t member) const {
    if (!search_.may_take(member, place)) return false;
    for (size_t index : touching_[place]) {
      const auto [a, b] = pairs_[index];
      const auto other = static_cast<size_t>(static_cast<size_t>(a) == place ? b : a);
      if (other == place || at_[other] < 0) continue;
      if (search_.crosses(members_[member], members_[static_cast<size_t>(at_[other])])) return false;
    }
    return true;
  }

  const std::vector<int>& members_;
  const RankPairs& pairs_;
  const OrderSearch& search_;
  std::vector<std::vector<size_t>> touching_;  // by place: indices of the pairs it is in
  std::vector<size_t> places_;                 // in the order they are filled
  std::vector<long> at_;                       // by place: index into members_, -1 while empty
  std::vector<char> used_;                     // by index into members_
};

// Places members one place at a time too, but each place keeps the members it may still
// take (its domain: those none of whose pairs with the places filled so far crosses), the
// next place filled is the one with the fewest left (the most paired first among equals),
// a member placed narrows its partners' domains, and a place or a member left with none
// sends the search back at once (forward checking). It finds orders that the fixed order
// of places misses, where a place filled early binds places filled late: recursive
// doubling on torus:8x8x4 with the link 8-72 slow both ways (72's eight partners must all
// sit on its side of the link) gave up after 200,000 tries. At each place the member there
// now is tried first, then the others in their order. A loop, up to OrderSearch::max_tries.
class ConstrainedPlaceSearch {
public:
  ConstrainedPlaceSearch(const std::vector<int>& members, const RankPairs& pairs, const OrderSearch& search)
      : members_(members), search_(search), n_(members.size()), words_((n_ + 63) / 64), partners_(n_),
        rows_(n_), domains_(n_ * words_, ~uint64_t{0}), used_(words_, 0), at_(n_, -1), most_paired_(n_) {
    for (auto [a, b] : pairs) {
      if (a == b) continue;
      partners_[static_cast<size_t>(a)].push_back(static_cast<size_t>(b));
      partners_[static_cast<size_t>(b)].push_back(static_cast<size_t>(a));
    }
    for (auto& list : partners_) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    if (const size_t spare = words_ * 64 - n_; spare > 0)  // members past n: never candidates
      for (size_t place = 0; place < n_; ++place) domains_[place * words_ + words_ - 1] >>= spare;
    for (size_t place = 0; place < n_ && !search.classes.empty(); ++place)  // a place keeps its group
      for (size_t member = 0; member < n_; ++member)
        if (!search.may_take(member, place)) domains_[place * words_ + member / 64] &= ~(uint64_t{1} << (member % 64));
    std::vector<size_t> places(n_);
    for (size_t place = 0; place < n_; ++place) places[place] = place;
    std::stable_sort(places.begin(), places.end(),
                     [&](size_t a, size_t b) { return partners_[a].size() > partners_[b].size(); });
    for (size_t rank = 0; rank < n_; ++rank) most_paired_[places[rank]] = rank;
  }

  bool run() {
    struct Frame {
      size_t place;
      size_t next = 0;         // the next candidate to try (see candidate())
      long member = -1;        // the member placed there now
      size_t trail = 0;        // trail_.size() before it was placed
    };
    std::vector<Frame> frames;
    frames.push_back(Frame{next_place()});
    long tries = 0;
    while (!frames.empty()) {
      Frame& frame = frames.back();
      if (frame.member >= 0) {  // back from the places after it: its next candidate
        take_back(frame.place, static_cast<size_t>(frame.member), frame.trail);
        --filled_;
      }
      frame.member = -1;
      bool advanced = false;
      while (frame.next < n_ && !advanced) {
        const size_t member = candidate(frame.place, frame.next++);
        if (!open(frame.place, member)) continue;
        if (++tries > search_.max_tries) return false;
        frame.trail = trail_.size();
        frame.member = static_cast<long>(member);
        if (!place(frame.place, member)) {
          take_back(frame.place, member, frame.trail);
          frame.member = -1;
          continue;
        }
        advanced = true;
      }
      if (!advanced) {
        frames.pop_back();
        continue;
      }
      if (++filled_ == n_) return true;
      frames.push_back(Frame{next_place()});
    }
    return false;
  }

  std::vector<int> order() const {
    std::vector<int> order(n_);
    for (size_t place = 0; place < n_; ++place) order[place] = members_[static_cast<size_t>(at_[place])];
    return order;
  }

private:
  // The k-th member tried at `place`: the one there now, then the others in their order.
  static size_t candidate(size_t place, size_t k) { return k == 0 ? place : (k - 1 < place ? k - 1 : k); }

  bool bit(const uint64_t* words, size_t i) const { return (words[i / 64] >> (i % 64)) & 1; }
  uint64_t* domain(size_t place) { return &domains_[place * words_]; }

  bool open(size_t place, size_t member) {
    return !bit(used_.data(), member) && bit(domain(place), member);
  }

  // How many members `place` may still take.
  size_t left(size_t place) {
    size_t count = 0;
    const uint64_t* words = domain(place);
    for (size_t w = 0; w < words_; ++w) count += static_cast<size_t>(__builtin_popcountll(words[w] & ~used_[w]));
    return count;
  }

  // The empty place with the fewest members left (the most paired, then the lowest, among equals).
  size_t next_place() {
    size_t best = n_, fewest = 0;
    for (size_t place = 0; place < n_; ++place) {
      if (at_[place] >= 0) continue;
      const size_t count = left(place);
      if (best == n_ || count < fewest || (count == fewest && most_paired_[place] < most_paired_[best])) {
        best = place;
        fewest = count;
      }
    }
    return best;
  }

  // Members that may pair with `member` (their routes cross no avoided half), read once.
  const std::vector<uint64_t>& row(size_t member) {
    std::vector<uint64_t>& row = rows_[member];
    if (row.empty()) {
      row.assign(words_, 0);
      for (size_t other = 0; other < n_; ++other)
        if (other != member && !search_.crosses(members_[member], members_[other])) row[other / 64] |= uint64_t{1} << (other % 64);
    }
    return row;
  }

  // Puts `member` at `place` and narrows its partners' domains; false when an empty place
  // has no member left.
  bool place(size_t place, size_t member) {
    at_[place] = static_cast<long>(member);
    used_[member / 64] |= uint64_t{1} << (member % 64);
    const std::vector<uint64_t>& compatible = row(member);
    for (size_t partner : partners_[place]) {
      if (at_[partner] >= 0) continue;
      uint64_t* words = domain(partner);
      for (size_t w = 0; w < words_; ++w) {
        if ((words[w] & compatible[w]) == words[w]) continue;
        trail_.push_back({partner * words_ + w, words[w]});
        words[w] &= compatible[w];
      }
    }
    // Every empty place must have a member left, and every member left a place (a root
    // whose routes cross the link to one member leaves that member no place).
    std::vector<uint64_t>& reachable = scratch_;
    reachable.assign(words_, 0);
    for (size_t other = 0; other < n_; ++other) {
      if (at_[other] >= 0) continue;
      if (left(other) == 0) return false;
      const uint64_t* words = domain(other);
      for (size_t w = 0; w < words_; ++w) reachable[w] |= words[w];
    }
    for (size_t w = 0; w < words_; ++w) {
      uint64_t unplaced = ~used_[w];
      if (w == words_ - 1 && n_ % 64 != 0) unplaced &= (uint64_t{1} << (n_ % 64)) - 1;
      if ((reachable[w] & unplaced) != unplaced) return false;
    }
    return true;
  }

  void take_back(size_t place, size_t member, size_t trail) {
    for (size_t i = trail_.size(); i > trail; --i) domains_[trail_[i - 1].first] = trail_[i - 1].second;
    trail_.resize(trail);
    used_[member / 64] &= ~(uint64_t{1} << (member % 64));
    at_[place] = -1;
  }

  const std::vector<int>& members_;
  const OrderSearch& search_;
  const size_t n_, words_;
  std::vector<std::vector<size_t>> partners_;   // by place: the places it pairs with
  std::vector<std::vector<uint64_t>> rows_;     // by member: row(), empty until read
  std::vector<uint64_t> domains_;               // by place, words_ each: the members it may take
  std::vector<uint64_t> used_;                  // the members placed
  std::vector<long> at_;                        // by place: index into members_, -1 while empty
  std::vector<size_t> most_paired_;             // by place: its rank by pairs, most first
  std::vector<std::pair<size_t, uint64_t>> trail_;  // (domain word, its value before), to take back
  std::vector<uint64_t> scratch_;               // place()'s members that some empty place may take
  size_t filled_ = 0;
};

}  // namespace

std::vector<int> order_by_places(const std::vector<int>& members, const RankPairs& pairs, const OrderSearch& search) {
  InOrderPlaceSearch in_order(members, pairs, search);
  if (in_order.run()) return in_order.order();
  ConstrainedPlaceSearch constrained(members, pairs, search);
  if (constrained.run()) return constrained.order();
  return {};
}

}  // namespace collsim
