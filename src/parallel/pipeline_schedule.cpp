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

std::vector<PipelinePass> interleaved_one_f_one_b(int stage, int stages, int chunks, int micro_batches) {
  if (chunks <= 1) return one_f_one_b(stage, stages, micro_batches);
  const int total = micro_batches * chunks;
  // Megatron's get_model_chunk_id and get_microbatch_id_in_model_chunk: the k-th pass of a
  // direction, in groups of P micro-batches per chunk
  auto pass = [&](int k, bool forward) {
    const int in_group = k % (stages * chunks);
    const int chunk = in_group / stages;
    return PipelinePass{forward, (k / (stages * chunks)) * stages + k % stages, forward ? chunk : chunks - 1 - chunk};
  };
  const int warm_up = micro_batches == stages ? total : std::min((stages - stage - 1) * 2 + (chunks - 1) * stages, total);
  std::vector<PipelinePass> order;
  for (int k = 0; k < warm_up; ++k) order.push_back(pass(k, true));
  for (int k = 0; k < total - warm_up; ++k) {
    order.push_back(pass(k + warm_up, true));
    order.push_back(pass(k, false));
  }
  for (int k = total - warm_up; k < total; ++k) order.push_back(pass(k, false));
  return order;
}

double one_f_one_b_bubble(int stages, int micro_batches, int chunks) {
  return static_cast<double>(stages - 1) / (static_cast<double>(micro_batches) * chunks + stages - 1);
}

}  // namespace collsim
