// A transformer's training step on a layout (src/parallel/step_executor.cpp), each simulated
// in a child process, against oracles worked out by hand: 1F1B's bubble (P - 1) / (m + P - 1)
// when communication is free, and the step time of tensor 2 x pipeline 2 x data 2.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstring>
#include <utility>
#include <string>
#include <vector>

#include "llm/step_estimate.hpp"
#include "parallel/executor.hpp"
#include "util/child_process.hpp"

using namespace collsim;
using nlohmann::json;

namespace {

struct StepChild {
  int exit_code = 0;
  std::string error;
  double step_time = 0, bubble = 0, verified = 0, collectives = 0, messages = 0;
};

StepChild run_step_in_child(const json& document) {
  const ChildOutcome outcome = run_in_child([&] {
    const ParallelOutcome run = run_parallel(parse_scenario(document, ""), PlanOptions{});
    const double values[5] = {run.step_time, run.figures.bubble_fraction,
                              run.verification.verified && run.stall.empty() ? 1.0 : 0.0,
                              static_cast<double>(run.step->collectives), static_cast<double>(run.step->pipeline_messages)};
    return std::string(reinterpret_cast<const char*>(values), sizeof values);
  });
  StepChild child;
  child.exit_code = outcome.exit_code;
  if (outcome.exit_code != 0) {
    child.error = outcome.output;
    return child;
  }
  double values[5];
  std::memcpy(values, outcome.output.data(), sizeof values);
  child.step_time = values[0];
  child.bubble = values[1];
  child.verified = values[2];
  child.collectives = values[3];
  child.messages = values[4];
  return child;
}

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("parallel step, 1F1B's bubble is (P - 1) / (m + P - 1) when communication is free") {
    // 4 stages of one block each (h = 2048), 8 micro-batches; a network of 10^15 B/s without
    // latency and a vocabulary of 1 (the last stage's logits: 2 b s h FLOPs against the
    // block's 24 b s h^2): both stay under 1e-4 of a block's time
    const json document = {{"topology", "star:4:1000000GBps:0us"},
                           {"parallelism",
                            {{"pipeline", 4},
                             {"step", {{"model", "tiny"}, {"layers", 4}, {"vocab", 1}, {"global_batch", 8},
                                       {"hidden", 2048}, {"ffn_hidden", 8192}, {"heads", 16}, {"kv_heads", 16},
                                       {"efficiency", 0.5}}}}}};
    const StepChild run = run_step_in_child(document);
    REQUIRE_MESSAGE(run.exit_code == 0, run.error);
    CHECK(run.verified == 1);
    CHECK(run.messages == 2 * 3 * 8);  // activations and gradients over each of the 3 boundaries, per micro-batch
    CHECK(run.bubble == doctest::Approx(3.0 / 11).epsilon(1e-3).scale(0));
  }

  TEST_CASE("parallel step, interleaved 1F1B's bubble is (P - 1) / (v m) of the ideal when communication is free") {
    // as above: GPT blocks of h = 2048 on a free network, a vocabulary of 1; each model chunk
    // holds `blocks` blocks, so a chunk's forward and backward of one micro-batch take 3 x
    // blocks x f, and the step is (v m + P - 1) of them: the ideal v m, the bubble P - 1
    const double h = 2048, s = 256, f = (24 * s * h * h + 4 * s * s * h) / (989.5e12 * 0.5);
    struct Case {
      int stages, chunks, micro_batches, blocks;
    };
    for (const Case c : {Case{4, 2, 8, 1}, Case{2, 3, 4, 2}, Case{4, 2, 4, 1}}) {
      CAPTURE(c.stages);
      CAPTURE(c.chunks);
      CAPTURE(c.micro_batches);
      const json document = {{"topology", fmt::format("star:{}:1000000GBps:0us", c.stages)},
                             {"parallelism",
                              {{"pipeline", c.stages},
                               {"step", {{"model", "tiny"}, {"layers", c.stages * c.chunks * c.blocks}, {"vocab", 1},
                                         {"global_batch", c.micro_batches}, {"hidden", 2048}, {"ffn_hidden", 8192},
                                         {"heads", 16}, {"kv_heads", 16}, {"efficiency", 0.5},
                                         {"virtual_stages", c.chunks}}}}}};
      const StepChild run = run_step_in_child(document);
      REQUIRE_MESSAGE(run.exit_code == 0, run.error);
      CHECK(run.verified == 1);
      // activations and gradients over each of the P v - 1 boundaries between virtual stages, per micro-batch
      CHECK(run.messages == 2 * (c.stages * c.chunks - 1) * c.micro_batches);
      const double v_m = static_cast<double>(c.chunks * c.micro_batches), p = c.stages;
      CHECK(run.step_time == doctest::Approx((v_m + p - 1) * 3 * c.blocks * f).epsilon(1e-4));
      CHECK(run.bubble == doctest::Approx((p - 1) / (v_m + p - 1)).epsilon(1e-3).scale(0));
    }
  }

  TEST_CASE("parallel step, tensor 2 x pipeline 2 x data 2 with one micro-batch takes its hand-computed time") {
    // h = s = 2048, two GPT blocks (one per stage), vocabulary 1024, H100 at half its 989.5
    // TFLOP/s, on star:8 at 1000 GB/s and 1 us per link (alpha = 2 us). Every transfer below
    // has its links to itself but one: stage 1's last gradient to stage 0 leaves its host
    // beside the first step of stage 1's data-parallel ring, and gets half the link.
    const double h = 2048, s = 2048, vocab = 1024, speed = 989.5e12 * 0.5, alpha = 2e-6, bw = 1000e9;
    const double f = (24 * s * h * h + 4 * s * s * h) / 2 / speed;   // a block's forward on one of 2 tensor GPUs
    const double g = 2 * f;                                           // its backward
    const double o = 2 * s * h * vocab / 2 / speed;                   // the logits' forward
    const double n = 2 * s * h;                                       // bf16 activations of one micro-batch
    const double a = 2 * (alpha + n / 2 / bw);                        // ring allreduce of n on 2 ranks
    const double q = alpha + n / bw, q_shared = alpha + 2 * n / bw;   // a pipeline message, alone and at half the link
    // stage 0's gradients per GPU: its block and the embeddings (token and learned positions), split over 2
    const double block = 12 * h * h + 13 * h, embeddings = vocab * h + s * h;
    const double w = 2 * alpha + 2 * (block + embeddings) / 2 / bw;  // their ring allreduce (2 bytes each) on 2 ranks
    const double forward = f + 2 * a, backward = g + 2 * a;
    const double want = forward + q + forward + 3 * o + backward + q_shared + backward + w;
    const json document = {{"topology", "star:8:1000GBps:1us"},
                           {"parallelism",
                            {{"tensor", 2}, {"pipeline", 2}, {"data", 2},
                             {"step", {{"model", "tiny"}, {"layers", 2}, {"hidden", 2048}, {"ffn_hidden", 8192},
                                       {"sequence", 2048}, {"heads", 16}, {"kv_heads", 16}, {"global_batch", 2},
                                       {"efficiency", 0.5}, {"algorithms", {{"tensor", "ring"}, {"data", "ring"}}}}}}}};
    const StepChild run = run_step_in_child(document);
    REQUIRE_MESSAGE(run.exit_code == 0, run.error);
    CHECK(run.verified == 1);
    CHECK(run.collectives == 4 * 2 * 2 + 4);  // 4 tensor groups x 2 passes x 2 allreduces, and 4 data groups' one bucket
    CHECK(run.step_time == doctest::Approx(want).epsilon(1e-9).scale(0));

    // Each GPU sends its peer 1/2 of the activation: with sequence parallelism its s/2 share
    // (Megatron's get_tensor_shapes), its tensor collectives an allgather and a reduce-scatter
    // of one step each where an allreduce took two (the same 2a a pass); with the scatter/gather
    // instead, the allreduces stay and each arrival is all-gathered in its tensor group (one
    // step of n/2: a/2), in stage 1 after the activation and in stage 0 after the gradient. The
    // half message beside stage 1's data ring still gets half the link all through it.
    const double q_half = alpha + n / 2 / bw, q_half_shared = alpha + n / bw;
    const double halves = forward + q_half + forward + 3 * o + backward + q_half_shared + backward + w;
    for (const bool sequence_parallel : {true, false}) {
      CAPTURE(sequence_parallel);
      json changed = document;
      changed["parallelism"]["step"][sequence_parallel ? "sequence_parallel" : "pipeline_scatter_gather"] = true;
      const StepChild split = run_step_in_child(changed);
      REQUIRE_MESSAGE(split.exit_code == 0, split.error);
      CHECK(split.verified == 1);
      CHECK(split.collectives == (sequence_parallel ? 4 * 2 * 4 + 4 : 4 * 2 * 2 + 4 + 4));
      CHECK(split.step_time == doctest::Approx(sequence_parallel ? halves : halves + 2 * a / 2).epsilon(1e-9).scale(0));
    }
  }
}

namespace {

// Each rank's compute, tensor, pipeline and exposed data seconds, from a child's step.
std::vector<RankStepTimes> rank_times_in_child(const json& document) {
  const ChildOutcome outcome = run_in_child([&] {
    const ParallelOutcome run = run_parallel(parse_scenario(document, ""), PlanOptions{});
    std::string out(reinterpret_cast<const char*>(run.step->ranks.data()), run.step->ranks.size() * sizeof(RankStepTimes));
    return out;
  });
  REQUIRE_MESSAGE(outcome.exit_code == 0, outcome.output);
  std::vector<RankStepTimes> times(outcome.output.size() / sizeof(RankStepTimes));
  std::memcpy(static_cast<void*>(times.data()), outcome.output.data(), times.size() * sizeof(RankStepTimes));
  return times;
}

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("parallel step, a GPU at half speed in one tensor group: its tensor peer waits in the tensor collectives") {
    // tensor 2 x data 2, one micro-batch: rank 0's GPU at half speed computes twice as long;
    // its tensor peer (rank 1) meets it at every tensor allreduce, so it waits exactly rank 0's
    // extra compute there, while the other tensor group (ranks 2, 3) waits for nothing
    json document = {{"topology", "star:4:1000GBps:1us"},
                     {"parallelism",
                      {{"tensor", 2}, {"data", 2},
                       {"step", {{"model", "tiny"}, {"layers", 2}, {"global_batch", 2}, {"efficiency", 0.5},
                                 {"algorithms", {{"tensor", "ring"}, {"data", "ring"}}}}}}}};
    const std::vector<RankStepTimes> healthy = rank_times_in_child(document);
    document["faults"] = {{{"kind", "slow-host"}, {"rank", 0}, {"factor", 0.5}, {"at", 0}}};
    const std::vector<RankStepTimes> slowed = rank_times_in_child(document);
    REQUIRE(healthy.size() == 4);
    REQUIRE(slowed.size() == 4);
    CHECK(slowed[0].compute == doctest::Approx(2 * healthy[0].compute).epsilon(1e-9).scale(0));
    CHECK(slowed[1].tensor - healthy[1].tensor == doctest::Approx(healthy[0].compute).epsilon(1e-6).scale(0));
    CHECK(slowed[0].tensor == doctest::Approx(healthy[0].tensor).epsilon(1e-6).scale(0));
    CHECK(slowed[2].tensor == doctest::Approx(healthy[2].tensor).epsilon(1e-6).scale(0));
    // the data-parallel peers of ranks 0 and 1 (ranks 2 and 3) wait for their slower buckets
    CHECK(slowed[2].data_exposed() > healthy[2].data_exposed());
  }
}

namespace {

// The messages a child's step sent, and what llm::step_messages counts before simulating.
std::pair<double, double> messages_in_child(const json& document) {
  const ChildOutcome outcome = run_in_child([&] {
    const Scenario scenario = parse_scenario(document, "");
    const ParallelOutcome run = run_parallel(scenario, PlanOptions{});
    const ParallelismSpec& p = scenario.parallelism;
    llm::Layout layout;
    layout.tensor = p.tensor;
    layout.pipeline = p.pipeline;
    layout.data = p.data;
    layout.sequence_parallel = p.step.sequence_parallel;
    layout.zero_stage = p.step.zero;
    layout.pipeline_scatter_gather = p.step.pipeline_scatter_gather;
    const double values[2] = {static_cast<double>(run.step->messages.count()),
                              llm::step_messages(p.step.model, layout, p.step.bucket_parameters)};
    return std::string(reinterpret_cast<const char*>(values), sizeof values);
  });
  REQUIRE_MESSAGE(outcome.exit_code == 0, outcome.output);
  double values[2];
  std::memcpy(values, outcome.output.data(), sizeof values);
  return {values[0], values[1]};
}

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("parallel step, the messages counted before simulating are the simulated step's, with rings") {
    // `sweep layouts --simulate` refuses a step by this count (--max-messages): with every
    // collective a ring it is exact; layouts with tensor, pipeline and data groups, sequence
    // parallelism, the distributed optimizer, several buckets (a 300,000-parameter bucket cap:
    // a bucket per block), and Megatron-LM's scatter/gather of the pipeline's tensors
    struct Case {
      int tensor, pipeline, data;
      bool sequence_parallel;
      int zero;
      long long bucket;
      bool scatter_gather = false;
    };
    for (const Case c : {Case{2, 2, 4, false, 0, 40000000}, Case{4, 1, 4, true, 1, 40000000}, Case{1, 2, 4, false, 0, 300000},
                         Case{2, 2, 2, true, 1, 300000}, Case{4, 2, 2, false, 0, 300000, true}}) {
      CAPTURE(c.tensor);
      CAPTURE(c.pipeline);
      CAPTURE(c.data);
      const json document = {
          {"topology", "star:16"},
          {"parallelism",
           {{"tensor", c.tensor}, {"pipeline", c.pipeline}, {"data", c.data},
            {"step", {{"model", "tiny"}, {"global_batch", 4 * c.data}, {"efficiency", 0.5},
                      {"sequence_parallel", c.sequence_parallel}, {"zero", c.zero}, {"bucket_parameters", c.bucket},
                      {"pipeline_scatter_gather", c.scatter_gather},
                      {"algorithms", {{"tensor", "ring"}, {"data", "ring"}}}}}}}};
      const auto [simulated, counted] = messages_in_child(document);
      CHECK(simulated > 0);
      CHECK(counted == simulated);
    }
  }
}
