// Parallel runs (src/parallel/): concurrent collectives on their groups, each simulated in a
// child process. The oracles: max-min shares on a shared link worked out by hand, a 1-D
// layout against today's single-group run to the last digit, every group's data verified.
#include <doctest/doctest.h>

#include <cstring>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "parallel/executor.hpp"
#include "sim/simulation.hpp"
#include "util/child_process.hpp"

using namespace collsim;

namespace {

// What a parallel run's child sends back: the step time, each communicator's time, the
// ranks verified and whether all were.
struct ParallelChild {
  int exit_code = 0;
  std::string error;
  double step_time = 0;
  std::vector<double> communicator_times;
  double checked_ranks = 0;
  bool verified = false;
};

ParallelChild run_parallel_in_child(const Scenario& scenario) {
  const ChildOutcome outcome = run_in_child([&] {
    const ParallelOutcome run = run_parallel(scenario, PlanOptions{});
    std::vector<double> values{run.step_time, static_cast<double>(run.verification.checked_ranks),
                               run.verification.verified && run.stall.empty() ? 1.0 : 0.0};
    for (const CommunicatorPlan& c : run.communicators) values.push_back(run.communicator_time(c.index));
    return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
  });
  ParallelChild child;
  child.exit_code = outcome.exit_code;
  if (outcome.exit_code != 0) {
    child.error = outcome.output;
    return child;
  }
  std::vector<double> values(outcome.output.size() / sizeof(double));
  std::memcpy(values.data(), outcome.output.data(), values.size() * sizeof(double));
  child.step_time = values[0];
  child.checked_ranks = values[1];
  child.verified = values[2] == 1.0;
  child.communicator_times.assign(values.begin() + 3, values.end());
  return child;
}

double simulated_time_in_child(const Scenario& scenario) {
  const ChildOutcome outcome = run_in_child([&] {
    const double time = run_simulation(scenario, PlanOptions{}).simulated_time;
    return std::string(reinterpret_cast<const char*>(&time), sizeof time);
  });
  REQUIRE_MESSAGE(outcome.exit_code == 0, outcome.output);
  double time = 0;
  std::memcpy(&time, outcome.output.data(), sizeof time);
  return time;
}

Scenario parallel_scenario(const std::string& topology, const nlohmann::json& parallelism) {
  return parse_scenario(nlohmann::json{{"topology", topology}, {"parallelism", parallelism}}, "");
}

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("parallel, two direct allreduces sharing rank 0's links take their max-min shares") {
    // star:3, 10 GB/s and 1 us per link: a route is the sender's up link and the receiver's
    // down link (alpha 2 us). A runs on ranks {0, 1} with 8 MB, B on {0, 2} with 24 MB;
    // each sends its vector both ways at once, so each of rank 0's links carries one flow
    // of A and one of B: both at B/2 until A is done, then B alone at B.
    const double alpha = 2e-6, bandwidth = 10e9, a = 8e6, b = 24e6;
    const Scenario s = parallel_scenario("star:3", {{"data", 3},
                                                    {"collectives",
                                                     {{{"ranks", {{0, 1}}}, {"algorithm", "direct"}, {"size", a}},
                                                      {{"ranks", {{0, 2}}}, {"algorithm", "direct"}, {"size", b}}}}});
    const ParallelChild run = run_parallel_in_child(s);
    REQUIRE_MESSAGE(run.exit_code == 0, run.error);
    CHECK(run.verified);
    CHECK(run.checked_ranks == 4);
    REQUIRE(run.communicator_times.size() == 2);
    CHECK(run.communicator_times[0] == doctest::Approx(alpha + a / (bandwidth / 2)).epsilon(1e-9).scale(0));
    CHECK(run.communicator_times[1] == doctest::Approx(alpha + a / (bandwidth / 2) + (b - a) / bandwidth).epsilon(1e-9).scale(0));
    CHECK(run.step_time == doctest::Approx(alpha + (a + b) / bandwidth).epsilon(1e-9).scale(0));
  }

  TEST_CASE("parallel, a 1-D data layout equals today's one-group run, less the GPUs' per-step launches") {
    // On GPUs (rail:2:4) a collective alone is collsim's, written on NCCL's send/recv: a kernel
    // launched per dependent step; in a parallel run it stands in for NCCL's own collective, one
    // kernel launched once (nccl/send_recv.hpp). rabenseifner on 8: 2 log2 8 = 6 steps of 1.5 MiB
    // to 384 KiB messages, all Simple (above 2 channels per peer x 16 KiB), so 6 launches of
    // NCCL's Ring/Simple baseLat 8.4 us alone against one (the 3 MiB vector is Simple too).
    // Elsewhere (no GPUs) the two runs are equal to the last digit.
    struct Case {
      const char* topology;
      const char* kind;
      const char* algorithm;
      int p;
      double fewer_launches;  // seconds
    };
    for (const Case& c : {Case{"star:8", "allreduce", "ring", 8, 0}, Case{"rail:2:4", "allreduce", "rabenseifner", 8, 5 * 8.4e-6},
                          Case{"fat-tree:2:4,4:1,2:1,2", "reduce-scatter", "ring", 16, 0},
                          Case{"star:6", "alltoall", "pairwise", 6, 0}}) {
      CAPTURE(c.topology);
      CAPTURE(c.algorithm);
      const nlohmann::json collective{{"kind", c.kind}, {"algorithm", c.algorithm}, {"size", 3 * 1024 * 1024}};
      nlohmann::json one = collective;
      one["group"] = "data";
      const ParallelChild parallel = run_parallel_in_child(parallel_scenario(c.topology, {{"data", c.p}, {"collectives", {one}}}));
      REQUIRE_MESSAGE(parallel.exit_code == 0, parallel.error);
      CHECK(parallel.verified);
      const double today = simulated_time_in_child(
          parse_scenario(nlohmann::json{{"topology", c.topology}, {"workers", c.p}, {"collective", collective}}, ""));
      if (c.fewer_launches == 0) CHECK(parallel.step_time == today);
      else CHECK(parallel.step_time == doctest::Approx(today - c.fewer_launches).epsilon(1e-12).scale(0));
    }
  }

  TEST_CASE("parallel, tensor, data, pipeline and expert collectives at once are each verified on real data") {
    // tensor 2 x data 4 x pipeline 2 on 16 hosts, expert groups of 2: 8 + 4 + 8 + 8 groups
    const Scenario s = parallel_scenario(
        "rail:4:4", {{"tensor", 2}, {"data", 4}, {"pipeline", 2}, {"expert", 2},
                     {"collectives",
                      {{{"group", "tensor"}, {"kind", "allreduce"}, {"algorithm", "auto"}, {"size", "1MiB"}},
                       {{"group", "data"}, {"kind", "reduce-scatter"}, {"size", "2MiB"}, {"dtype", "bfloat16"}},
                       {{"group", "pipeline"}, {"kind", "broadcast"}, {"size", "256KiB"}, {"root", 1}},
                       {{"group", "expert"}, {"kind", "alltoall"}, {"size", "512KiB"}}}}});
    const ParallelChild run = run_parallel_in_child(s);
    REQUIRE_MESSAGE(run.exit_code == 0, run.error);
    CHECK(run.verified);
    CHECK(run.checked_ranks == 4 * 16);  // every rank of every group of the four collectives
    REQUIRE(run.communicator_times.size() == 4);
    for (double t : run.communicator_times) CHECK(t > 0);
    CHECK(run.step_time == doctest::Approx(*std::max_element(run.communicator_times.begin(), run.communicator_times.end())).scale(0));
  }
}
