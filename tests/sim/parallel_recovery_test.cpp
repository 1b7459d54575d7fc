// A lost worker in a training step (src/parallel/step_recovery.cpp), each step simulated in a
// child process, against step times worked out by hand: under recovery.policy "rebuild" the
// lost worker's replica leaves and the data-parallel groups, rebuilt from the other replicas,
// redo their buckets from the moment of the fault.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "parallel/executor.hpp"
#include "util/child_process.hpp"

using namespace collsim;
using nlohmann::json;

namespace {

// What the parent needs of a child's step, as JSON.
json step_in_child(const json& document) {
  const ChildOutcome outcome = run_in_child([&] {
    const ParallelOutcome run = run_parallel(parse_scenario(document, ""), PlanOptions{});
    json out{{"step_time", run.step_time}, {"verified", run.verification.verified}, {"stall", run.stall},
             {"collectives", run.step->collectives}, {"kept", run.step->kept_fraction},
             {"tokens_per_second", run.figures.tokens_per_second}, {"recoveries", json::array()},
             {"data_runs", json::array()}};
    for (const CollectiveRun& r : run.step->runs)
      if (std::string(step_communicator_name(r.communicator)) == "data")
        out["data_runs"].push_back({{"group", r.group}, {"start", r.start}, {"end", r.end}});
    for (const StepRecovery& r : run.step->recoveries) {
      json algorithms = json::array();  // what the rebuilt groups reduce with, per bucket size
      for (const DataChoice& c : r.data_choices) algorithms.push_back(c.reduce.algorithm == nullptr ? "" : c.reduce.algorithm->name);
      out["recoveries"].push_back({{"dropped", r.dropped_ranks}, {"group", r.group}, {"data_groups", r.data_groups},
                                   {"fault_time", r.fault_time}, {"resumed", r.resumed}, {"completed", r.completed},
                                   {"epoch_after", r.epoch_after}, {"stopped", r.stopped}, {"data_algorithms", algorithms}});
    }
    return out.dump();
  });
  REQUIRE_MESSAGE(outcome.exit_code == 0, outcome.output);
  return json::parse(outcome.output);
}

// The tiny model with 2 GPT blocks (h = s = 256, vocabulary 1024, micro-batch 1, one
// micro-batch per replica), an H100 at half its 989.5 TFLOP/s, on star:P at 1000 GB/s and
// 1 us per link (alpha = 2 us), ring allreduces.
struct TinyStep {
  double h = 256, s = 256, vocab = 1024, speed = 989.5e12 * 0.5, alpha = 2e-6, bw = 1000e9;
  double f = (24 * s * h * h + 4 * s * s * h) / speed;  // a block's forward
  double o = 2 * s * h * vocab / speed;                 // the logits' forward
  // forward (2 blocks, logits), backward (the logits' twice, 2 blocks at twice their forward)
  double compute = 2 * f + o + 2 * o + 2 * 2 * f;
  // one stage's gradients, bf16, one bucket (40 M parameters): 2 blocks of 12h^2 + 13h, the
  // token and position embeddings, the final norm (the output layer is tied)
  double bytes = 2 * (2 * (12 * h * h + 13 * h) + vocab * h + s * h + 2 * h);
  double ring_step(int p) const { return alpha + bytes / p / bw; }
  double allreduce(int p) const { return 2 * (p - 1) * ring_step(p); }  // 2(p-1) steps of n/p
};

// `more` adds to (or replaces) the step's keys; `expert` > 1 needs experts in `more`.
json tiny_document(int pipeline, int data, const json& faults, const json& more = json::object(), int expert = 1) {
  json step{{"model", "tiny"}, {"layers", 2}, {"global_batch", data}, {"efficiency", 0.5}, {"algorithms", {{"data", "ring"}}}};
  step.update(more);
  return {{"topology", "star:" + std::to_string(pipeline * data) + ":1000GBps:1us"},
          {"faults", faults},
          {"recovery", {{"policy", "rebuild"}}},
          {"parallelism", {{"pipeline", pipeline}, {"data", data}, {"expert", expert}, {"step", step}}}};
}

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("parallel step recovery, data 3: a worker lost while computing leaves the other two to reduce alone") {
    const TinyStep t;
    const json healthy = step_in_child(tiny_document(1, 3, json::array()));
    CHECK(healthy["step_time"].get<double>() == doctest::Approx(t.compute + t.allreduce(3)).epsilon(1e-9).scale(0));
    const json run = step_in_child(tiny_document(1, 3, {{{"kind", "preempt"}, {"rank", 2}, {"at", t.compute / 2}}}));
    CHECK(run["stall"] == "");
    CHECK(run["verified"] == true);
    // backward makes the bucket at `compute`; the 2 survivors' ring then takes 2 steps of n/2
    CHECK(run["step_time"].get<double>() == doctest::Approx(t.compute + t.allreduce(2)).epsilon(1e-9).scale(0));
    REQUIRE(run["recoveries"].size() == 1);
    const json& r = run["recoveries"][0];
    CHECK(r["dropped"] == json{2});
    CHECK(r["group"] == json({0, 1}));
    CHECK(r["data_groups"] == json::array({{0, 1}}));
    CHECK(r["fault_time"].get<double>() == doctest::Approx(t.compute / 2).epsilon(1e-12).scale(0));
    CHECK(r["completed"].get<double>() == run["step_time"].get<double>());
    CHECK(run["kept"].get<double>() == doctest::Approx(2.0 / 3).epsilon(1e-12).scale(0));
    // tokens/s counts the 2 replicas' tokens that reach the update: 2 sequences of 256
    CHECK(run["tokens_per_second"].get<double>() ==
          doctest::Approx(2 * 256 / run["step_time"].get<double>()).epsilon(1e-9).scale(0));
  }

  TEST_CASE("parallel step recovery, data 4 by auto: the rebuilt group of 3 chooses direct where the 4 chose recursive doubling") {
    // By the cost model (collsim list algorithms), with alpha = 2 us and the bucket's n = 3.82 MB
    // at B = 1000 GB/s (n/B = 3.82 us): at p = 4, recursive doubling takes log2 4 = 2 steps of
    // the whole vector, 2 (alpha + n/B) = 11.63 us, under direct's alpha + 3 n/B = 13.45 us (it
    // wins while alpha < n/B), ring's 6 (alpha + n/4B) = 17.72 us and Rabenseifner's 4 alpha +
    // 1.5 n/B = 13.72 us. At p = 3, not a power of two, recursive doubling needs 2 steps more
    // (3 (alpha + n/B) = 17.45 us; Rabenseifner cannot run), and direct's alpha + 2 n/B = 9.63 us
    // is below ring's 4 (alpha + n/3B) = 13.09 us: the rebuilt group runs direct.
    const TinyStep t;
    const json automatic{{"algorithms", {{"data", "auto"}}}};
    const double n_over_b = t.bytes / t.bw;
    const json healthy = step_in_child(tiny_document(1, 4, json::array(), automatic));
    CHECK(healthy["step_time"].get<double>() == doctest::Approx(t.compute + 2 * (t.alpha + n_over_b)).epsilon(1e-9).scale(0));
    const json run = step_in_child(tiny_document(1, 4, {{{"kind", "preempt"}, {"rank", 3}, {"at", t.compute / 2}}}, automatic));
    CHECK(run["stall"] == "");
    CHECK(run["verified"] == true);
    REQUIRE(run["recoveries"].size() == 1);
    CHECK(run["recoveries"][0]["data_groups"] == json::array({{0, 1, 2}}));
    CHECK(run["recoveries"][0]["data_algorithms"] == json::array({"direct"}));
    // the bucket is made at `compute`; the 3 survivors then send it to each other at once
    CHECK(run["step_time"].get<double>() == doctest::Approx(t.compute + t.alpha + 2 * n_over_b).epsilon(1e-9).scale(0));
  }

  TEST_CASE("parallel step recovery, data 3: a worker lost inside the bucket's allreduce, which the survivors redo from then") {
    const TinyStep t;
    // the fault strikes halfway through the ring's second step (of 4)
    const double at = t.compute + 1.5 * t.ring_step(3);
    const json run = step_in_child(tiny_document(1, 3, {{{"kind", "preempt"}, {"rank", 1}, {"at", at}}}));
    CHECK(run["stall"] == "");
    CHECK(run["verified"] == true);
    CHECK(run["step_time"].get<double>() == doctest::Approx(at + t.allreduce(2)).epsilon(1e-9).scale(0));
    REQUIRE(run["recoveries"].size() == 1);
    CHECK(run["recoveries"][0]["dropped"] == json{1});
    CHECK(run["recoveries"][0]["resumed"].get<double>() == doctest::Approx(at).epsilon(1e-12).scale(0));
    // a NIC's link down instead: its rank is cut off, with the same outcome
    const json down = step_in_child(tiny_document(1, 3, {{{"kind", "link-down"}, {"rank", 1}, {"at", at}}}));
    CHECK(down["verified"] == true);
    CHECK(down["step_time"].get<double>() == doctest::Approx(at + t.allreduce(2)).epsilon(1e-9).scale(0));
  }

  TEST_CASE("parallel step recovery, pipeline 2 x data 3: the lost worker's whole replica leaves, two groups are rebuilt") {
    // world = d + 3 s (Megatron's order, tensor 1): replica d = 1 is ranks 1 (stage 0) and 4 (stage 1)
    const json run = step_in_child(tiny_document(2, 3, {{{"kind", "preempt"}, {"rank", 4}, {"at", 1e-6}}}));
    CHECK(run["stall"] == "");
    CHECK(run["verified"] == true);
    REQUIRE(run["recoveries"].size() == 1);
    const json& r = run["recoveries"][0];
    CHECK(r["dropped"] == json({1, 4}));
    CHECK(r["group"] == json({0, 2, 3, 5}));
    CHECK(r["data_groups"] == json::array({{0, 2}, {3, 5}}));
    // the step of the two replicas left: as the same layout with data 2 from the start (the
    // lost replica's sends shared no link with them, and it left before any bucket was made)
    const json two = step_in_child(tiny_document(2, 2, json::array()));
    CHECK(run["step_time"].get<double>() == doctest::Approx(two["step_time"].get<double>()).epsilon(1e-9).scale(0));
    // a second loss in another replica: epoch 2, one replica left, nothing to reduce
    const json twice = step_in_child(tiny_document(
        2, 3, {{{"kind", "preempt"}, {"rank", 4}, {"at", 1e-6}}, {{"kind", "preempt"}, {"rank", 0}, {"at", 2e-6}}}));
    CHECK(twice["verified"] == true);
    REQUIRE(twice["recoveries"].size() == 2);
    CHECK(twice["recoveries"][1]["dropped"] == json({0, 3}));
    CHECK(twice["recoveries"][1]["epoch_after"] == 2);
    CHECK(twice["recoveries"][1]["data_groups"] == json::array({{2}, {5}}));
  }

  TEST_CASE("parallel step recovery, pipeline 2 x data 3: a worker lost in the last allreduces, all compute done") {
    // stage 0's bucket (its block, the token and position embeddings) is the step's last
    // collective: the fault strikes halfway through its ring's second step, when every compute
    // stream has ended and only data streams are left (all of them stopped by the rebuild: the
    // new ones must start first). Stage 1's ring (block, final norm, the embedding's copy:
    // smaller) is still in flight too; both groups' survivors redo theirs from then, on links
    // of their own, and stage 0's ends the step
    const TinyStep t;
    const json healthy = step_in_child(tiny_document(2, 3, json::array()));
    double start = 0;
    for (const json& r : healthy["data_runs"])
      if (r["group"] == 0) start = r["start"].get<double>();
    REQUIRE(start > 0);
    const double bytes = 2 * ((12 * t.h * t.h + 13 * t.h) + t.vocab * t.h + t.s * t.h);
    const double step3 = t.alpha + bytes / 3 / t.bw, step2 = t.alpha + bytes / 2 / t.bw;
    CHECK(healthy["step_time"].get<double>() == doctest::Approx(start + 4 * step3).epsilon(1e-9).scale(0));
    const double at = start + 1.5 * step3;
    const json run = step_in_child(tiny_document(2, 3, {{{"kind", "preempt"}, {"rank", 1}, {"at", at}}}));
    CHECK(run["stall"] == "");
    CHECK(run["verified"] == true);
    REQUIRE(run["recoveries"].size() == 1);
    CHECK(run["recoveries"][0]["data_groups"] == json::array({{0, 2}, {3, 5}}));
    CHECK(run["step_time"].get<double>() == doctest::Approx(at + 2 * step2).epsilon(1e-9).scale(0));
  }

  TEST_CASE("parallel step recovery, pipeline 2 x data 1: no replica is left, the step stops") {
    const json run = step_in_child(tiny_document(2, 1, {{{"kind", "preempt"}, {"rank", 1}, {"at", 1e-6}}}));
    CHECK(run["stall"].get<std::string>().find("recovery stopped") == 0);
    REQUIRE(run["recoveries"].size() == 1);
    CHECK(run["recoveries"][0]["stopped"] == true);
  }

  TEST_CASE("parallel step recovery, ZeRO-1 data 3: the survivors redo the reduce-scatter and the allgather on 2") {
    // the distributed optimizer: the bucket reduce-scattered, then the parameters all-gathered,
    // two rings of (p - 1) steps of n/p: fault-free as the allreduce's 2 (p - 1); the fault
    // halfway through the reduce-scatter's second step, the survivors redo both on 2
    const TinyStep t;
    const json zero1{{"zero", 1}};
    const json healthy = step_in_child(tiny_document(1, 3, json::array(), zero1));
    CHECK(healthy["step_time"].get<double>() == doctest::Approx(t.compute + t.allreduce(3)).epsilon(1e-9).scale(0));
    const double at = t.compute + 1.5 * t.ring_step(3);
    const json run = step_in_child(tiny_document(1, 3, {{{"kind", "preempt"}, {"rank", 1}, {"at", at}}}, zero1));
    CHECK(run["stall"] == "");
    CHECK(run["verified"] == true);
    CHECK(run["step_time"].get<double>() == doctest::Approx(at + t.allreduce(2)).epsilon(1e-9).scale(0));
    REQUIRE(run["recoveries"].size() == 1);
    CHECK(run["recoveries"][0]["data_groups"] == json::array({{0, 2}}));
    // lost in the allgather instead (its first step): the survivors redo both from then
    const double late = t.compute + 2 * t.ring_step(3) + 0.5 * t.ring_step(3);
    const json gather = step_in_child(tiny_document(1, 3, {{{"kind", "preempt"}, {"rank", 0}, {"at", late}}}, zero1));
    CHECK(gather["verified"] == true);
    CHECK(gather["step_time"].get<double>() == doctest::Approx(late + t.allreduce(2)).epsilon(1e-9).scale(0));
  }

  TEST_CASE("parallel step recovery, expert 2: a lost worker takes its expert group out, the others go on") {
    // a mixture of 4 experts, top 2, over expert groups of 2 consecutive data indices: data 6
    // is 3 expert groups; rank 3 (data index 3) is in group {2, 3}, whose alltoalls cannot go
    // on without it: both leave. The survivors (data 0, 1, 4, 5) reduce the dense buckets in
    // one group of 4 and the experts' gradients in expert-data groups {0, 4} and {1, 5}: the
    // step of data 4 x expert 2 from the start (on star's own links nothing else is shared)
    const json moe{{"experts", 4}, {"top_k", 2}};
    const json run = step_in_child(tiny_document(1, 6, {{{"kind", "preempt"}, {"rank", 3}, {"at", 1e-6}}}, moe, 2));
    CHECK(run["stall"] == "");
    CHECK(run["verified"] == true);
    REQUIRE(run["recoveries"].size() == 1);
    CHECK(run["recoveries"][0]["dropped"] == json({2, 3}));
    CHECK(run["recoveries"][0]["data_groups"] == json::array({{0, 1, 4, 5}}));
    const json four = step_in_child(tiny_document(1, 4, json::array(), moe, 2));  // one micro-batch a replica, as above
    CHECK(run["step_time"].get<double>() == doctest::Approx(four["step_time"].get<double>()).epsilon(1e-9).scale(0));
    CHECK(run["kept"].get<double>() == doctest::Approx(4.0 / 6).epsilon(1e-12).scale(0));
    // data 4 x expert 2: the other expert group alone is left, its expert-data groups of one
    const json two = step_in_child(tiny_document(1, 4, {{{"kind", "preempt"}, {"rank", 0}, {"at", 1e-6}}}, moe, 2));
    CHECK(two["verified"] == true);
    CHECK(two["recoveries"][0]["dropped"] == json({0, 1}));
    CHECK(two["recoveries"][0]["data_groups"] == json::array({{2, 3}}));
  }
}
