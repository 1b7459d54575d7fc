// On an ideal network without contention, simulated time equals the alpha-beta formula,
// written out here from alpha and B (not taken from src/model).
#include <doctest/doctest.h>

#include <cmath>

#include "sim_harness.hpp"

using namespace collsim;
using collsim::testing::make_scenario;
using collsim::testing::simulate_in_child;

namespace {

const int timing_ps[] = {2, 3, 4, 7, 8, 16, 64};

int rounds_of(int p) { return static_cast<int>(std::ceil(std::log2(static_cast<double>(p)) - 1e-12)); }

// n bytes per rank; alpha is a route's latency (two links), B a link's bandwidth.
double formula(const std::string& collective, const std::string& algorithm, int p, double n, double alpha, double B,
               double segment) {
  if (algorithm == "ring") return 2.0 * (p - 1) * (alpha + n / p / B);
  if (algorithm == "naive") return 2.0 * (alpha + (p - 1) * n / B);
  if (algorithm == "naive-binomial") return 2.0 * rounds_of(p) * (alpha + n / B);
  if (algorithm == "binomial") return rounds_of(p) * (alpha + n / B);
  if (algorithm == "flat") return alpha + (p - 1) * n / B;
  if (algorithm == "pipeline") {
    const double k = std::ceil(n / segment);
    return (p - 1 + k - 1) * (alpha + segment / B);
  }
  FAIL("no formula for " << collective << " " << algorithm);
  return 0;
}

struct Case {
  Collective collective;
  const char* algorithm;
};
const Case cases[] = {{Collective::allreduce, "ring"},      {Collective::allreduce, "naive"},
                      {Collective::allreduce, "naive-binomial"}, {Collective::broadcast, "binomial"},
                      {Collective::broadcast, "flat"},      {Collective::broadcast, "pipeline"},
                      {Collective::reduce, "binomial"},     {Collective::reduce, "flat"}};

void check_timing(const std::string& topology, double link_latency, double bandwidth, bool cluster_file) {
  for (const Case& c : cases) {
    for (int p : timing_ps) {
      if (cluster_file && p > 64) continue;
      CAPTURE(c.algorithm);
      CAPTURE(p);
      // A size divisible by p and by the segment count, so that every chunk is equal.
      const size_t elements = static_cast<size_t>(p) * 512;
      Scenario s = make_scenario(c.collective, c.algorithm, p, elements);
      if (!topology.empty()) s.topology = topology;
      const double n = static_cast<double>(elements * 4);
      s.collective.segment = n / 8;
      const auto run = simulate_in_child(s);
      REQUIRE_MESSAGE(run.exit_code == 0, run.error);
      const double want = formula(collective_name(c.collective).data(), c.algorithm, p, n, 2 * link_latency, bandwidth,
                                  n / 8);
      CHECK(run.simulated_time == doctest::Approx(want).epsilon(1e-6));
      CHECK(run.model_time == doctest::Approx(want).epsilon(1e-6));
    }
  }
}

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("simulated time equals the alpha-beta formula on generated stars") {
    check_timing("", 1e-6, 10e9, false);
  }
  TEST_CASE("simulated time equals the alpha-beta formula on a SimGrid <cluster> file") {
    check_timing(COLLSIM_SOURCE_DIR "/topologies/star-64.xml", 1e-6, 10e9, true);
  }
  TEST_CASE("a star generator's bandwidth and latency reach the simulation") {
    Scenario s = make_scenario(Collective::allreduce, "ring", 4, 4 * 1024);
    s.topology = "star:4:1GBps:5us";
    const auto run = simulate_in_child(s);
    REQUIRE(run.exit_code == 0);
    CHECK(run.simulated_time == doctest::Approx(2.0 * 3 * (10e-6 + 4096.0 / 1e9)).epsilon(1e-9));
  }
}
