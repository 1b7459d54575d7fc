#pragma once
// An error inside an actor (a bug, not a simulated failure) is kept for the end of the
// run instead of letting SimGrid abort; a preemption's kill goes through.
#include <exception>
#include <simgrid/Exception.hpp>

#include "sim/run_state.hpp"

namespace collsim {

// Runs `body`, keeping its first error in `failure` (the run's or a parallel step's).
template <typename Body>
void guarded(std::exception_ptr& failure, Body body) {
  try {
    body();
  } catch (const simgrid::ForcefulKillException&) {
    throw;
  } catch (...) {
    if (!failure) failure = std::current_exception();
  }
}

template <typename Body>
void guarded(RunState& state, Body body) {
  guarded(state.record.failure, body);
}

}  // namespace collsim
