#pragma once
// SimGrid reports some input problems (a platform without a route between two hosts, a
// model that refuses a link) by printing a CRITICAL line and aborting. While a guard is
// alive, SimGrid's log output goes to a temporary file; if SimGrid aborts or crashes, the
// guard prints that message as collsim's one error line and exits with status 2 (bad input).
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
  // Forget what SimGrid logged (its deadlock dump, when collsim reports the stall itself).
  void discard();
};

}  // namespace collsim
