#pragma once
// Runs one simulation in a forked child (one SimGrid engine per process) and brings back
// its simulated time and every rank's final buffer, so that tests check them in the parent.
#include <cstdint>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "sim/verify.hpp"

namespace collsim::testing {

struct ChildRun {
  int exit_code = 0;
  std::string error;
  double simulated_time = 0;
  double model_time = 0;
  uint64_t messages = 0;  // as the run's message log counted them
  std::vector<Buffer> results;
};

ChildRun simulate_in_child(const Scenario& scenario, const InputFn& input = {});

// A scenario on star:P (10GBps, 1us per link) unless a topology is given.
Scenario make_scenario(Collective kind, const std::string& algorithm, int p, size_t elements, Dtype dtype = Dtype::float32,
                       OpKind op = OpKind::sum, int root = 0);

// A float32 allreduce of `bytes` on a named platform (GPU presets, rail:, ...).
Scenario allreduce_on(const std::string& algorithm, const std::string& topology, int p, double bytes);

}  // namespace collsim::testing
