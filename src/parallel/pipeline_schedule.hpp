#pragma once
// The order in which a pipeline stage runs its micro-batches' forward and backward passes:
// Megatron-LM's 1F1B (megatron/core/pipeline_parallel/schedules.py; Narayanan et al. SC'21,
// sec. 2.2.1), without interleaving (forward_backward_pipelining_without_interleaving) or
// interleaved over virtual stages (forward_backward_pipelining_with_interleaving, sec. 2.2.2).
#include <vector>

namespace collsim {

// One pass of a stage: a forward or backward of micro-batch `micro_batch` through the stage's
// model chunk `chunk` (0 without interleaving; with v chunks, chunk c of stage s of P is
// virtual stage c P + s, and holds the blocks of that virtual stage).
struct PipelinePass {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;
  bool operator==(const PipelinePass&) const = default;
};

// Without interleaving: stage s of P first runs min(P - s - 1, m) forwards (warm-up), then
// alternates one forward and one backward until every forward has run, then runs the
// backwards left (cool-down). At most P - s micro-batches are in flight on stage s, which is
// what bounds its activations.
std::vector<PipelinePass> one_f_one_b(int stage, int stages, int micro_batches);

// Interleaved over `chunks` model chunks per stage (Megatron's virtual pipeline; m a multiple
// of P): the m x v passes of each direction go in groups of P micro-batches per chunk, chunk
// 0 first forward and last backward; stage s warms up with (P - s - 1) x 2 + (v - 1) x P
// forwards (all of them when m = P), then alternates one forward and one backward, then
// cools down. With chunks = 1 it is one_f_one_b.
std::vector<PipelinePass> interleaved_one_f_one_b(int stage, int stages, int chunks, int micro_batches);

// The fraction of a step that every stage idles when forward and backward take the same time
// on every stage and communication is free: (P - 1) / (v m + P - 1), i.e. a bubble of
// (P - 1) / (v m) of the ideal time (v = 1: 1F1B's (P - 1) / (m + P - 1)).
double one_f_one_b_bubble(int stages, int micro_batches, int chunks = 1);

}  // namespace collsim
