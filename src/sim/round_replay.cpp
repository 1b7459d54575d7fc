#include "sim/round_replay.hpp"

#include <limits>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include "algorithms/algorithms.hpp"
#include "sim/replay.hpp"
#include "sim/run_state.hpp"
#include "training/noise.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

// How long round `round`'s computation takes on this rank, alone on its host.
double compute_seconds(const RunState& state, int world, int round) {
  return round_compute_flops(state, world, round) / sg4::this_actor::get_host()->get_speed();
}

}  // namespace

double round_compute_flops(const RunState& state, int world, int round) {
  const Scenario& scenario = *state.setup.scenario;
  const TrainingSpec& training = scenario.training;
  const double flops = training.compute_flops + training.compute * sg4::this_actor::get_host()->get_speed();
  const double factor = state.host_speed_factor[static_cast<size_t>(world)] /
                        compute_noise(training.noise, scenario.seed, world, round);
  return flops / factor;
}

void declare_round_entry(RunState& state, int world, int round) {
  const double compute = compute_seconds(state, world, round);
  const double next = round + 1 < state.setup.scenario->training.rounds ? compute_seconds(state, world, round + 1)
                                                                        : std::numeric_limits<double>::infinity();
  state.replay->declare(world, sg4::Engine::get_clock() + compute, -std::numeric_limits<double>::infinity(), next);
}

void run_round_collective(RunState& state, int world, Comm& comm, Buffer& buf, const CollectiveArgs& args, int round) {
  const RunSetup& setup = state.setup;
  const double launch = setup.plan->training.launch_seconds(-1);
  const ReplayShape shape{setup.algorithm, buf.map(), launch, 0, round, -1};
  if (const auto replayed = state.replay->enter(world, shape, buf)) {
    sg4::this_actor::sleep_until(*replayed);
  } else {
    comm.begin_collective();
    comm.compute(launch);
    setup.algorithm->run(comm, buf, args);
  }
  state.replay->leave(world);
}

}  // namespace collsim
