#pragma once
// An error inside an actor (a bug, not a simulated failure) is kept for the end of the
// run instead of letting SimGrid abort; a preemption's kill goes through.
#include <exception>
#include <simgrid/Exception.hpp>

#include "sim/run_state.hpp"

namespace collsim {

template <typename Body>
void guarded(RunState& state, Body body) {
  try {
    body();
  } catch (const simgrid::ForcefulKillException&) {
    throw;
  } catch (...) {
    if (!state.record.failure) state.record.failure = std::current_exception();
  }
}

}  // namespace collsim
