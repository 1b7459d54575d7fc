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

}  // namespace collsim
