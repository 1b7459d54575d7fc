#pragma once
// The order in which a pipeline stage runs its micro-batches' forward and backward passes:
// Megatron-LM's 1F1B without interleaving (megatron/core/pipeline_parallel/schedules.py,
// forward_backward_pipelining_without_interleaving; Narayanan et al. SC'21, sec. 2.2.1):
// stage s of P first runs min(P - s - 1, m) forwards (warm-up), then alternates one forward
// and one backward until every forward has run, then runs the backwards left (cool-down).
// At most P - s micro-batches are in flight on stage s, which is what bounds its activations.
#include <vector>

namespace collsim {

struct PipelinePass {
  bool forward = true;
  int micro_batch = 0;
  bool operator==(const PipelinePass&) const = default;
};

std::vector<PipelinePass> one_f_one_b(int stage, int stages, int micro_batches);

// The fraction of a 1F1B step that every stage idles when forward and backward take the same
// time on every stage and communication is free: (P - 1) / (m + P - 1).
double one_f_one_b_bubble(int stages, int micro_batches);

}  // namespace collsim
