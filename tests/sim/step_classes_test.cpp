// Pricing a lock-step schedule's step once per class of its groups of messages
// (model/step_classes.hpp) against pricing the whole step in one fluid run, on the routes
// of a platform of every generated family and of a hand-written file, for every
// algorithm's schedule and a few p: the times agree to 1e-9, and the bottleneck named is
// that of a message ending last (to rounding) in the whole step.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "model/fluid.hpp"
#include "model/step_classes.hpp"
#include "plan/planner.hpp"
#include "sim_harness.hpp"
#include "util/child_process.hpp"

using namespace collsim;
using collsim::testing::make_scenario;

namespace {

struct Compared {
  size_t steps = 0, differing = 0, other_bottleneck = 0;
  double worst = 0;  // the largest relative difference of a step's time
  std::string first_other = "-";  // the first step whose bottleneck differs: algorithm, time/sharing/bandwidth both ways
};

double bandwidth_of(const StepCost& cost, const Network& network) {
  return cost.bottleneck < 0 ? -1 : network.link(cost.bottleneck).bandwidth;
}

// Whether `cost`'s bottleneck (its bandwidth and sharing) is that of a message of the whole
// step's fluid run ending last to rounding (messages ending together may each be named).
bool among_slowest(const StepCost& cost, const Step& step, const ModelInput& model) {
  std::vector<FluidMessage> messages;
  for (const Flow& flow : step.flows) messages.push_back({flow, 0});
  const std::vector<Arrival> arrivals = run_fluid(messages, model, *model.network);
  double last = 0;
  for (const Arrival& a : arrivals) last = std::max(last, a.finish);
  for (const Arrival& a : arrivals) {
    if (a.finish < last * (1 - 1e-12)) continue;
    const double bandwidth = a.bottleneck < 0 ? -1 : model.network->link(a.bottleneck).bandwidth;
    if (bandwidth == bandwidth_of(cost, *model.network) && a.sharing == cost.sharing) return true;
  }
  return false;
}

// Every step of every algorithm's schedule (NCCL's but the ring, which prices its own
// transport) on the plan's routes, priced both ways.
Compared compare_steps(const ModelInput& model) {
  Compared compared;
  for (const AlgorithmInfo& algorithm : all_algorithms()) {
    if (algorithm.uses.nccl) continue;
    const Schedule schedule = algorithm.schedule(model);
    for (const Step& step : schedule.steps()) {
      const StepCost by_class = price_step_by_class(step, model, *model.network);
      const StepCost whole = price_step_whole(step, model, *model.network);
      ++compared.steps;
      const double difference = std::abs(by_class.time - whole.time) / std::max(whole.time, 1e-300);
      compared.worst = std::max(compared.worst, difference);
      if (difference > 1e-9) ++compared.differing;
      if (!among_slowest(by_class, step, model))
        if (compared.other_bottleneck++ == 0)
          compared.first_other = fmt::format("{}:{:.17g}/{}/{:g}-vs-{:.17g}/{}/{:g}", algorithm.name, by_class.time,
                                             by_class.sharing, bandwidth_of(by_class, *model.network), whole.time,
                                             whole.sharing, bandwidth_of(whole, *model.network));
    }
  }
  return compared;
}

void check_topology(const std::string& topology, int p, size_t elements) {
  CAPTURE(topology);
  CAPTURE(p);
  const ChildOutcome outcome = run_in_child([&] {
    Scenario s = make_scenario(Collective::allreduce, "ring", p, elements);
    s.topology = topology;
    PlanOptions options;
    options.topology_bound = false;
    options.model_only = true;
    SimGridGuard guard;
    const RunPlan plan = plan_run(s, options, guard);
    const Compared c = compare_steps(plan.model);
    return fmt::format("{} {} {} {} {}", c.steps, c.differing, c.other_bottleneck, c.worst, c.first_other);
  });
  REQUIRE_MESSAGE(outcome.exit_code == 0, outcome.output);
  std::istringstream out(outcome.output);
  Compared c;
  out >> c.steps >> c.differing >> c.other_bottleneck >> c.worst >> c.first_other;
  CAPTURE(c.first_other);
  MESSAGE(fmt::format("{} p={}: {} steps, largest relative difference {:.3g}", topology, p, c.steps, c.worst));
  CHECK(c.steps > 50);
  CHECK(c.differing == 0);
  CHECK(c.other_bottleneck == 0);
}

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("a step priced once per class of its messages costs what the whole step costs, on every family") {
    const std::vector<std::pair<std::string, int>> platforms{
        {"star:16", 16},           {"star:16", 13},           {"rack:16:3:1.25GBps", 16}, {"fat-tree:2:4,4:1,2:1,2", 16},
        {"torus:4x4", 16},         {"torus:4x2x2", 12},       {"dragonfly:4:4:2", 32},    {"nodes:4:8", 32},
        {"nodes:4:8", 20},         {"rail:4:8", 32},          {"dgx-h100:2", 16},         {"leaf-spine:4:4:10GBps:1us:2", 16},
        {"gb200-nvl72:1", 72},     {COLLSIM_SOURCE_DIR "/topologies/two-racks.xml", 16}};
    for (const auto& [topology, p] : platforms) check_topology(topology, p, size_t{1} << 20);
  }

  TEST_CASE("a step priced once per class of its messages costs what the whole step costs at p = 64 to 256") {
    check_topology("dgx-h100:8", 64, size_t{1} << 24);
    check_topology("fat-tree:2:16,16:1,16:1,1", 256, size_t{1} << 24);
    check_topology("torus:4x4x4", 64, 4096);
  }
}
