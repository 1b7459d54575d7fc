#pragma once
// SimGrid allows one engine per process, so anything that needs a second engine (listing
// several platform files, tests, sweeps) runs the work in a forked child and reads back
// what it printed.
#include <functional>
#include <string>

namespace collsim {

struct ChildOutcome {
  int exit_code = 0;    // the child's exit status; 128+N if it died of signal N
  std::string output;   // what `work` returned (on success) or the error message
};

// Runs `work` in a child process. Returning normally means exit code 0 with its result as
// output; an exception means exit code 2 with its message. Never call after creating an
// engine in this process.
ChildOutcome run_in_child(const std::function<std::string()>& work);

// The same, without waiting: start a child, then collect its outcome when `fd` (the read
// end of its output) reaches end of file. For running several children at once.
struct RunningChild {
  int pid = -1;
  int fd = -1;
  std::string output;
};
RunningChild start_child(const std::function<std::string()>& work);
// Reads what is available; true once the child closed its output.
bool read_child_output(RunningChild& child);
// Waits for the child to exit (after read_child_output returned true).
ChildOutcome finish_child(RunningChild& child);

// Runs work(i) for i = 0 .. count-1, each in a child, `jobs` at a time, and calls
// done(i, outcome, seconds of wall time) in this process as each one finishes. Stops
// starting new ones once stop() says so, and then terminates those still running (their
// done is not called). Returns whether every child ran.
bool run_children(size_t count, int jobs, const std::function<std::string(size_t)>& work,
                  const std::function<void(size_t, const ChildOutcome&, double)>& done,
                  const std::function<bool()>& stop);

}  // namespace collsim
