#pragma once
// A memo of the last pair each rank took part in, as sender and as receiver: a rank sends
// to the same peer and hears from the same peer many times in a row (a ring's neighbours,
// a tree's parent), so looking a pair's value up here first spares a hash lookup (and its
// cache miss) on most messages. Values are pointers into a table whose entries never move.
#include <cstddef>
#include <vector>

namespace collsim {

template <class T>
class LastPairs {
 public:
  void resize(size_t ranks) {
    out_.assign(ranks, {});
    in_.assign(ranks, {});
  }

  // The value remembered for (src, dst), or nullptr.
  T* find(int src, int dst) const {
    const Entry& out = out_[static_cast<size_t>(src)];
    if (out.peer == dst) return out.value;
    const Entry& in = in_[static_cast<size_t>(dst)];
    return in.peer == src ? in.value : nullptr;
  }

  void remember(int src, int dst, T* value) {
    out_[static_cast<size_t>(src)] = {dst, value};
    in_[static_cast<size_t>(dst)] = {src, value};
  }

 private:
  struct Entry {
    int peer = -1;
    T* value = nullptr;
  };
  std::vector<Entry> out_, in_;  // by sender, by receiver
};

}  // namespace collsim
