#include <doctest/doctest.h>

#include <stdexcept>

#include "run/run_scenario.hpp"
#include "util/errors.hpp"

using namespace collsim;

TEST_CASE("auto by simulation: a trial that finished gives its times") {
  const AutoCandidate ring = judge_trial("ring", {0, R"({"model": 0.5, "simulated": 0.75})"}, true);
  CHECK(ring.algorithm == "ring");
  CHECK(ring.model_time == 0.5);
  CHECK(ring.simulated_time == 0.75);
  CHECK(ring.error.empty());
}

TEST_CASE("auto by simulation: a trial that died fails the run, it is not ruled out quietly") {
  // 128 + 11: the child died of SIGSEGV; 128 + 9: it was killed (out of memory, say)
  CHECK_THROWS_WITH_AS(judge_trial("direct", {139, ""}, false), "auto: the trial of direct died (exit status 139)",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(judge_trial("direct", {137, ""}, true), doctest::Contains("exit status 137"), std::runtime_error);
  // exit 2 without a message is not a refusal either
  CHECK_THROWS_AS(judge_trial("ring", {2, ""}, false), std::runtime_error);
}

TEST_CASE("auto by simulation: a refusal rules out that candidate, or is the scenario's when the first refuses") {
  const AutoCandidate out = judge_trial("rabenseifner", {2, "workers: not a power of two"}, false);
  CHECK(out.error == "workers: not a power of two");
  CHECK_FALSE(out.simulated_time.has_value());
  CHECK_THROWS_WITH_AS(judge_trial("naive", {2, "topology: no such file"}, true), "topology: no such file", InputError);
}
