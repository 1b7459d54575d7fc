#pragma once
// "did you mean" for near-miss names (algorithms, scenario keys, policies).
#include <string>
#include <string_view>
#include <vector>

namespace collsim {

// The closest candidate within a small edit distance, or "" if none is close.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'ring'?)" or "", ready to append to an error message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

std::string join(const std::vector<std::string>& words, std::string_view separator = ", ");

}  // namespace collsim
