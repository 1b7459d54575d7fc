#pragma once
// SimGrid reports some input problems (a platform without a route between two hosts, a
// model that refuses a link) by printing a CRITICAL line and aborting. While a guard is
// alive, SimGrid's log output goes to a temporary file; if SimGrid aborts on purpose while
// the input is read, the guard prints that message as collsim's one error line and exits
// with status 2 (bad input). Any other crash (a signal, an abort while simulating) is
// reported as "collsim: internal error: ..." with exit status 1: a bug, never the input's.
// When the guard ends normally, whatever SimGrid logged (warnings) is passed on to stderr.
#include <string>

namespace collsim {

class SimGridGuard {
public:
  SimGridGuard();
  ~SimGridGuard();
  SimGridGuard(const SimGridGuard&) = delete;
  SimGridGuard& operator=(const SimGridGuard&) = delete;

  // Catch SimGrid's aborts and crashes from now on (call after creating the engine,
  // which installs handlers of its own).
  void catch_crashes();
  // What the error line names as the likely cause, e.g. "topology: 'two-racks.xml'".
  void set_context(const std::string& context);
  // The plan is made: from now on the engine runs it, and a crash is an internal error.
  void simulating(const std::string& what);
  // Forget what SimGrid logged (its deadlock dump, when collsim reports the stall itself).
  void discard();
};

// `collsim run --progress`: lines written at once to the real stderr (SimGrid's own output is
// captured meanwhile), so that a long run says how far it is. The first line is printed when the
// engine starts running the plan ("simulating ..."); workers add one per round (sim/faults.cpp).
void enable_progress();
bool progress_enabled();
// "collsim: TEXT (W s wall)" on the real stderr, W counted from enable_progress(); nothing when
// progress is off.
void progress_line(const std::string& text);

}  // namespace collsim
