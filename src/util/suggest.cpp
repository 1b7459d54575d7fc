#include "util/suggest.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace collsim {
namespace {

// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
// two neighbours ("rnig" is one step from "ring") each cost 1.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  // Close enough to be a typo: one edit per three letters, and never the whole word.
  size_t best_distance = std::max<size_t>(1, word.size() / 3) + 1;
  for (const auto& candidate : candidates) {
    // a word much longer or shorter than the candidate is no typo of it (and the distance
    // of a million-letter key to every candidate took seconds)
    if (word.size() > 2 * candidate.size() + 8 || candidate.size() > 2 * word.size() + 8) continue;
    const size_t d = edit_distance(word, candidate);
    if (d < best_distance && d < word.size()) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string best = closest_match(word, candidates);
  return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

std::string join(const std::vector<std::string>& words, std::string_view separator) {
  return fmt::format("{}", fmt::join(words, separator));
}

}  // namespace collsim
