#include "parallel/layout.hpp"

namespace collsim {

LayoutCoordinates coordinates_of(const ParallelismSpec& layout, int world) {
  LayoutCoordinates c;
  c.tensor = world % layout.tensor;
  c.data = (world / layout.tensor) % layout.data;
  c.pipeline = world / (layout.tensor * layout.data);
  c.expert = c.data % layout.expert;
  return c;
}

int world_rank_of(const ParallelismSpec& layout, int tensor, int data, int pipeline) {
  return tensor + layout.tensor * (data + layout.data * pipeline);
}

std::vector<std::vector<int>> dimension_groups(const ParallelismSpec& layout, Dimension dimension) {
  const int T = layout.tensor, D = layout.data, P = layout.pipeline, E = layout.expert;
  std::vector<std::vector<int>> groups;
  switch (dimension) {
    case Dimension::tensor:
      for (int s = 0; s < P; ++s)
        for (int d = 0; d < D; ++d) {
          groups.emplace_back();
          for (int t = 0; t < T; ++t) groups.back().push_back(world_rank_of(layout, t, d, s));
        }
      break;
    case Dimension::data:
      for (int s = 0; s < P; ++s)
        for (int t = 0; t < T; ++t) {
          groups.emplace_back();
          for (int d = 0; d < D; ++d) groups.back().push_back(world_rank_of(layout, t, d, s));
        }
      break;
    case Dimension::pipeline:
      for (int d = 0; d < D; ++d)
        for (int t = 0; t < T; ++t) {
          groups.emplace_back();
          for (int s = 0; s < P; ++s) groups.back().push_back(world_rank_of(layout, t, d, s));
        }
      break;
    case Dimension::expert:
      for (int s = 0; s < P; ++s)
        for (int block = 0; block < D / E; ++block)
          for (int t = 0; t < T; ++t) {
            groups.emplace_back();
            for (int e = 0; e < E; ++e) groups.back().push_back(world_rank_of(layout, t, e + E * block, s));
          }
      break;
  }
  return groups;
}

std::vector<std::vector<int>> collective_groups(const ParallelismSpec& layout, const ParallelCollective& collective) {
  return collective.group ? dimension_groups(layout, *collective.group) : collective.ranks;
}

}  // namespace collsim
