#include "training/variable_placement.hpp"

#include <algorithm>

namespace collsim {

const NamedEnum<VariablePlacement>& variable_placements() {
  static const NamedEnum<VariablePlacement> table{"variable placement",
                                                  {{VariablePlacement::split, "split"},
                                                   {VariablePlacement::round_robin, "round-robin"},
                                                   {VariablePlacement::least_loaded, "least-loaded"}}};
  return table;
}

namespace {

// A layer's tensors: its table, or the whole layer as one.
std::vector<uint64_t> tensors_of(const Layer& layer) {
  return layer.variables.empty() ? std::vector<uint64_t>{layer.parameters} : layer.variables;
}

}  // namespace

std::vector<uint64_t> model_variables(const std::vector<Layer>& layers) {
  std::vector<uint64_t> sizes;
  for (const Layer& layer : layers)
    for (uint64_t count : tensors_of(layer)) sizes.push_back(count);
  return sizes;
}

std::vector<int> place_variables(const std::vector<Layer>& layers, VariablePlacement how, int servers) {
  const std::vector<uint64_t> sizes = model_variables(layers);
  std::vector<int> server_of(sizes.size());
  std::vector<uint64_t> load(static_cast<size_t>(std::max(servers, 1)), 0);
  for (size_t v = 0; v < sizes.size(); ++v) {
    const size_t s = how == VariablePlacement::round_robin
                         ? v % load.size()
                         : static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    server_of[v] = static_cast<int>(s);
    load[s] += sizes[v];
  }
  return server_of;
}

ServerPieces bucket_pieces(const std::vector<Layer>& layers, const Bucket& bucket, const std::vector<int>& server_of) {
  size_t variable = 0;  // the bucket's first variable's index in the model
  for (int l = 0; l < bucket.first; ++l) variable += tensors_of(layers[static_cast<size_t>(l)]).size();
  ServerPieces pieces;
  size_t offset = 0;
  for (int l = bucket.first; l <= bucket.last; ++l)
    for (uint64_t count : tensors_of(layers[static_cast<size_t>(l)])) {
      pieces.push_back({offset, static_cast<size_t>(count), server_of[variable++]});
      offset += count;
    }
  return pieces;
}

}  // namespace collsim
