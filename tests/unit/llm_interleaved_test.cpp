// Megatron's interleaved 1F1B in the layout search (src/llm/): the activations a stage holds
// (memory.hpp's chunks_in_flight) against the schedule collsim simulates and against
// Megatron's own estimate of them; the step estimate's bubble and messages by hand; the
// virtual-stage counts the search enumerates.
#include <algorithm>
#include <doctest/doctest.h>

#include "llm/layouts.hpp"
#include "llm/memory.hpp"
#include "llm/step_estimate.hpp"
#include "llm_test_cluster.hpp"
#include "parallel/pipeline_schedule.hpp"

using namespace collsim;
using namespace collsim::llm;

namespace {

// The most forwards not yet matched by their backward, walking the stage's pass order.
int peak_in_flight(const std::vector<PipelinePass>& order) {
  int held = 0, most = 0;
  for (const PipelinePass& pass : order) most = std::max(most, held += pass.forward ? 1 : -1);
  return most;
}

Layout pipelined(int tensor, int pipeline, int data, int chunks) {
  Layout layout;
  layout.tensor = tensor, layout.pipeline = pipeline, layout.data = data, layout.virtual_stages = chunks;
  return layout;
}

}  // namespace

TEST_CASE("llm: passes in flight are the simulated schedule's peak, (P - s - 1) 2 + (v - 1) P + 1 by hand") {
  // P 4, v 2, m 8: stage s warms up with (3 - s) x 2 + 4 forwards, then one more before its first backward.
  for (int s = 0; s < 4; ++s) CHECK(chunks_in_flight(pipelined(1, 4, 1, 2), s, 8) == (3 - s) * 2 + 4 + 1);
  // m = P: Megatron runs every forward first, all v m in flight on every stage.
  for (int s = 0; s < 4; ++s) CHECK(chunks_in_flight(pipelined(1, 4, 1, 2), s, 4) == 8);
  // v 1: plain 1F1B, P - s (at most m).
  for (int s = 0; s < 4; ++s) CHECK(chunks_in_flight(pipelined(1, 4, 1, 1), s, 8) == 4 - s);
  CHECK(chunks_in_flight(pipelined(1, 4, 1, 1), 0, 2) == 2);
  // Against the order the simulated step runs (parallel/pipeline_schedule.cpp), over shapes.
  for (const int p : {2, 3, 4, 8})
    for (const int v : {1, 2, 3, 4})
      for (const int groups : {1, 2, 3, 5})
        for (int s = 0; s < p; ++s) {
          const int m = groups * p;
          CAPTURE(p);
          CAPTURE(v);
          CAPTURE(m);
          CAPTURE(s);
          CHECK(chunks_in_flight(pipelined(1, p, 1, v), s, m) == peak_in_flight(interleaved_one_f_one_b(s, p, v, m)));
        }
}

TEST_CASE("llm: the first stage keeps 1 + (P - 1) / (P v) times 1F1B's activations (Megatron's estimate)") {
  // megatron/training/theoretical_memory_usage.py: interleaved_schedule_memory_penalty =
  // 1 + (pp - 1) / (pp x vpp) on the first stage's P micro-batches of its L / P blocks.
  const TransformerModel m = transformer_preset("gpt3-175b", "model");  // 96 blocks
  const int shapes[][2] = {{8, 3}, {8, 2}, {4, 6}, {2, 4}, {12, 2}};  // pipeline, chunks
  for (const auto& shape : shapes) {
    const int p = shape[0], v = shape[1];
    CAPTURE(p);
    CAPTURE(v);
    Layout plain = pipelined(8, p, 1, 1);
    plain.recompute = Recompute::selective;
    Layout interleaved = plain;
    interleaved.virtual_stages = v;
    REQUIRE(micro_batches(m, plain) > p);
    const double penalty = 1 + static_cast<double>(p - 1) / (p * v);
    CHECK(memory_per_gpu(m, interleaved).activations ==
          doctest::Approx(penalty * memory_per_gpu(m, plain).activations).epsilon(1e-12).scale(0));
    CHECK(memory_per_gpu(m, interleaved).stage == 0);
  }
  // Korthikanti et al.'s GPT-3 run, TP 8 x PP 8 x 3 chunks, selective recomputation and
  // sequence parallelism: 31 passes of 4 blocks, each 34 s b h / 8 bytes.
  Layout run = pipelined(8, 8, 1, 3);
  run.recompute = Recompute::selective, run.sequence_parallel = true;
  const double sbh = 2048.0 * 12288;
  CHECK(memory_per_gpu(m, run).activations == doctest::Approx(31 * 4 * 34 * sbh / 8).epsilon(1e-12).scale(0));
}

TEST_CASE("llm: the estimate's interleaved bubble is (P - 1) / (v m) of the ideal, its messages v times 1F1B's") {
  const TransformerModel m = transformer_preset("tiny", "model");  // L 4, h 256, s 256, V 1024, B 8
  Cluster cluster = hand_worked_cluster();
  const Layout plain = pipelined(2, 2, 2, 1), interleaved = pipelined(2, 2, 2, 2);
  const StepEstimate one = estimate_step(m, plain, cluster), two = estimate_step(m, interleaved, cluster);
  // As llm_layout_test's TP2 x PP2 x DP2 by hand: the last stage's micro-batch (its 2 blocks
  // and the logits) and its 8 tensor allreduces; stages are a node apart.
  const double forward = (402653184.0 + 67108864.0) / 2, rate = 0.5e12;
  const double work = 2 * 3 * forward / rate + 3 * (2.0 * 256 * 256 * 1024 / 2) / rate + 2 * 4 * 2 * (1e-6 + 131072 / 200e9);
  const double messages = 2 * (5e-6 + 131072 / 10e9);  // a chunk's activation in and gradient back
  const int micro = 4;
  CHECK(two.compute_time == one.compute_time);
  CHECK(two.pipeline.exposed == doctest::Approx(micro * 2 * messages).epsilon(1e-12).scale(0));
  CHECK(two.bubble_time == doctest::Approx(work / 2 + messages).epsilon(1e-12).scale(0));
  CHECK(one.bubble_time == doctest::Approx(work + messages).epsilon(1e-12).scale(0));
  CHECK(two.bubble_fraction == doctest::Approx(1.0 / 9).epsilon(1e-12));
  CHECK(two.step_time == doctest::Approx(micro * work + micro * 2 * messages + work / 2 + messages).epsilon(1e-12).scale(0));
  // On a free network the bubble is (P - 1) / (v m) of the ideal m x work: P 4, v 2, m 8.
  cluster.nvlink = cluster.nic = {1e30, 0};
  const TransformerModel deep = [] {
    TransformerModel model = transformer_preset("tiny", "model");
    model.layers = 16, model.global_batch = 8;
    return model;
  }();
  const StepEstimate free = estimate_step(deep, pipelined(1, 4, 1, 2), cluster);
  const double ideal = free.compute_time;
  CHECK(free.bubble_time == doctest::Approx(ideal * 3 / (2 * 8)).epsilon(1e-12).scale(0));
  CHECK(free.step_time == doctest::Approx(ideal * (1 + 3.0 / 16)).epsilon(1e-9).scale(0));
  // Messages to simulate: 2 (P v - 1) m a tensor x data chain (here 1) for the pipeline.
  const double tensorless = step_messages(deep, pipelined(1, 4, 1, 2), 40e6) - step_messages(deep, pipelined(1, 4, 1, 1), 40e6);
  CHECK(tensorless == 2 * (8 - 1) * 8 - 2 * (4 - 1) * 8);
}

TEST_CASE("llm: with interleaving the first stage's chunks' gradients are reduced from P chunk backwards apart") {
  // tiny (L 4, h 256) on TP1 x PP2 x DP8, 2 micro-batches a replica, NICs of 1 GB/s and 5 us:
  // stage 0's gradients, 2 blocks of 12 h^2 + 13 h and the embedding (1024 + 256) h in bf16,
  // a ring allreduce over 8 across nodes, D = 14 (5 us + n / 8 GB/s); its backward of one
  // micro-batch B = 2 blocks x 2 x a block's forward at 0.5 TFLOP/s. In 1F1B the reduction
  // overlaps that backward: D - B exposed. With 2 chunks chunk 1's last backward comes P = 2
  // chunk backwards (B / 2 each) before chunk 0's: chunk 1's half of D from 3 B / 2 before the
  // end, chunk 0's from B / 2: max(D / 2 - B / 2, D - 3 B / 2) exposed.
  const TransformerModel m = [] {
    TransformerModel model = transformer_preset("tiny", "model");
    model.global_batch = 16;
    return model;
  }();
  Cluster cluster = hand_worked_cluster();
  cluster.nic = {1e9, 5e-6};
  const double bytes = 2 * (2 * 789760.0 + 1280.0 * 256);
  const double data = 14 * (5e-6 + bytes / (8 * 1e9));
  const double backward = 2 * 2 * (402653184.0 + 67108864.0) / 0.5e12;
  REQUIRE(data > backward);
  const StepEstimate one = estimate_step(m, pipelined(1, 2, 8, 1), cluster), two = estimate_step(m, pipelined(1, 2, 8, 2), cluster);
  CHECK(one.data.total == doctest::Approx(data).epsilon(1e-12).scale(0));
  CHECK(two.data.total == doctest::Approx(data).epsilon(1e-12).scale(0));
  CHECK(one.data.exposed == doctest::Approx(data - backward).epsilon(1e-12).scale(0));
  CHECK(two.data.exposed == doctest::Approx(std::max(data / 2 - backward / 2, data - 1.5 * backward)).epsilon(1e-12).scale(0));
  CHECK(two.data.exposed < one.data.exposed);
}

TEST_CASE("llm: the search tries every interleaving Megatron allows, up to the limit asked") {
  const TransformerModel m = transformer_preset("tiny", "model");  // 4 blocks, 8 sequences
  LayoutRules rules;
  rules.gpus = 8, rules.gpus_per_node = 4, rules.memory_bytes = 80e9;
  std::vector<std::string> interleaved;
  for (const auto& c : enumerate_layouts(m, rules))
    if (c.layout.virtual_stages > 1) interleaved.push_back(layout_name(c.layout));
  // pipeline 2 with 2 chunks of 1 block where a replica's micro-batches (8 / data) are even:
  // data 4, 2 and 1; pipeline 4 has 1 block a stage, nothing to split.
  CHECK(interleaved == std::vector<std::string>{"TP1 PP2 DP4 VP2", "TP2 PP2 DP2 VP2", "TP4 PP2 DP1 VP2"});
  rules.max_virtual_stages = 1;
  for (const auto& c : enumerate_layouts(m, rules)) CHECK(c.layout.virtual_stages == 1);
  Layout layout = pipelined(1, 2, 4, 1);
  CHECK(interleaving_allowed(m, layout, 2));
  CHECK_FALSE(interleaving_allowed(m, layout, 4));  // 4 layers do not make 8 virtual stages
  layout.data = 8;                                  // 1 micro-batch a replica: not a group of 2
  CHECK_FALSE(interleaving_allowed(m, layout, 2));
  CHECK_FALSE(interleaving_allowed(m, pipelined(1, 1, 8, 1), 2));  // no pipeline
}
