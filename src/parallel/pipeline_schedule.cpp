#include "parallel/pipeline_schedule.hpp"

#include <algorithm>

namespace collsim {

std::vector<PipelinePass> one_f_one_b(int stage, int stages, int micro_batches) {
  const int warm_up = std::min(stages - stage - 1, micro_batches);
  std::vector<PipelinePass> order;
  int forwards = 0, backwards = 0;
  for (; forwards < warm_up; ++forwards) order.push_back({true, forwards});
  while (forwards < micro_batches) {
    order.push_back({true, forwards++});
    order.push_back({false, backwards++});
  }
  while (backwards < micro_batches) order.push_back({false, backwards++});
  return order;
}

double one_f_one_b_bubble(int stages, int micro_batches) {
  return static_cast<double>(stages - 1) / static_cast<double>(micro_batches + stages - 1);
}

}  // namespace collsim
