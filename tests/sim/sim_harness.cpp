#include "sim_harness.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <stdexcept>

#include "sim/simulation.hpp"
#include "model/cost_model.hpp"
#include "util/child_process.hpp"

namespace collsim::testing {

Scenario make_scenario(Collective kind, const std::string& algorithm, int p, size_t elements, Dtype dtype, OpKind op,
                       int root) {
  Scenario s;
  s.name = "test";
  s.workers = p;
  s.topology = fmt::format("star:{}", p);
  // NCCL's algorithms run on GPUs: nodes of 4 H100 (a smaller last node when 4 does not divide
  // p); NVLS in one node, NVLSTree across nodes of equal size (NCCL's rules), CollNet across
  // nodes of equal size whose NICs' switches reduce (SHARP)
  const bool collnet = algorithm.rfind("nccl-collnet", 0) == 0;
  const std::string equal_nodes = p % 2 == 0 ? fmt::format("rail:2:{}", p / 2) : fmt::format("rail:{}:1", p);
  if (!chosen_at_run_time(algorithm) && find_algorithm(kind, algorithm, "test").uses.nccl)
    s.topology = algorithm == "nccl-nvls"        ? fmt::format("rail:1:{}", p)
                 : algorithm == "nccl-nvls-tree" ? equal_nodes
                 : collnet                       ? equal_nodes + ":h100:ndr-sharp"
                                                 : fmt::format("rail:{}:4", (p + 3) / 4);
  s.collective.kind = kind;
  s.collective.algorithm = algorithm;
  s.collective.dtype = dtype;
  s.collective.op = op;
  s.collective.root = root;
  s.collective.size = static_cast<double>(elements * dtype_size(dtype));
  return s;
}

// Child output: simulated time, model time, messages, then each rank's raw bytes.
ChildRun simulate_in_child(const Scenario& scenario, const InputFn& input) {
  const ChildOutcome outcome = run_in_child([&] {
    PlanOptions options;
    options.input = input;
    // a run that succeeded ends with no actor blocked: else SimGrid printed "Deadlock detected"
    // and some actor (a switch's, a server's) waited for messages that never came
    static bool deadlocked = false;
    simgrid::s4u::Engine::on_deadlock_cb([] { deadlocked = true; });
    SimResult result = run_simulation(scenario, options);
    if (result.stall.empty() && deadlocked)
      throw std::runtime_error("the run succeeded but SimGrid found actors blocked at its end (a deadlock)");
    std::string out(3 * sizeof(double), '\0');
    const double times[3] = {result.simulated_time, model_time(*result.plan->choice.algorithm, result.plan->model),
                             static_cast<double>(result.messages.count())};
    std::memcpy(out.data(), times, sizeof times);
    for (const Buffer& b : result.results)
      out.append(reinterpret_cast<const char*>(b.data()), b.carried() * b.elem_bytes());
    return out;
  });
  ChildRun run;
  run.exit_code = outcome.exit_code;
  if (outcome.exit_code != 0) {
    run.error = outcome.output;
    return run;
  }
  double times[3];
  std::memcpy(times, outcome.output.data(), sizeof times);
  run.simulated_time = times[0];
  run.model_time = times[1];
  run.messages = static_cast<uint64_t>(times[2]);
  const int p = *scenario.workers;
  // the elements each rank holds in memory: all of them, or the carried ones
  size_t count = static_cast<size_t>(scenario.collective.size) / dtype_size(scenario.collective.dtype);
  if (scenario.collective.carried_elements) count = std::min(count, static_cast<size_t>(*scenario.collective.carried_elements));
  const size_t bytes = count * dtype_size(scenario.collective.dtype);
  size_t offset = sizeof times;
  for (int r = 0; r < p; ++r, offset += bytes) {
    Buffer b(scenario.collective.dtype, count);
    if (offset + bytes <= outcome.output.size()) std::memcpy(b.data(), outcome.output.data() + offset, bytes);
    run.results.push_back(std::move(b));
  }
  return run;
}

Scenario allreduce_on(const std::string& algorithm, const std::string& topology, int p, double bytes) {
  Scenario s = make_scenario(Collective::allreduce, algorithm, p, static_cast<size_t>(bytes / 4));
  s.topology = topology;
  return s;
}

}  // namespace collsim::testing
