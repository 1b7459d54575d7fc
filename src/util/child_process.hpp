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

}  // namespace collsim
