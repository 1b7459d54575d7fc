#include "algorithms/model_input.hpp"

#include <stdexcept>

#include "algorithms/hierarchy.hpp"
#include "comm/buffer.hpp"

namespace collsim {

double ModelInput::bytes(size_t count) const { return static_cast<double>(count) * bytes_per_elem; }

std::vector<std::vector<int>> model_groups(const ModelInput& in) {
  if (!in.locality.empty()) return locality_groups(in.locality);
  const std::vector<int> sizes = in.group_sizes.empty() ? std::vector<int>{in.p} : in.group_sizes;
  int ranks = 0;
  for (int size : sizes) ranks += size;
  if (ranks != in.p) throw std::logic_error("model_groups: group sizes do not add up to p");
  return consecutive_groups(sizes);
}

}  // namespace collsim
