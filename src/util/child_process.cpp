#include "util/child_process.hpp"

#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <csignal>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace collsim {
namespace {

void write_all(int fd, const std::string& text) {
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n <= 0) return;
    written += static_cast<size_t>(n);
  }
}

}  // namespace

RunningChild start_child(const std::function<std::string()>& work) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe() failed");
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork() failed");
  if (pid == 0) {
    // The child dies with its parent, even one killed with SIGKILL (a sweep's points must
    // not run on alone).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::close(pipe_fds[0]);
    int code = 0;
    std::string output;
    try {
      output = work();
    } catch (const std::exception& error) {
      output = error.what();
      code = 2;
    }
    write_all(pipe_fds[1], output);
    ::close(pipe_fds[1]);
    std::fflush(nullptr);
    ::_exit(code);  // skip static destructors: the engine is not ours to tear down
  }
  ::close(pipe_fds[1]);
  return RunningChild{pid, pipe_fds[0], ""};
}

bool read_child_output(RunningChild& child) {
  char chunk[65536];
  const ssize_t n = ::read(child.fd, chunk, sizeof chunk);
  if (n > 0) {
    child.output.append(chunk, static_cast<size_t>(n));
    return false;
  }
  if (n < 0 && errno == EINTR) return false;
  return true;
}

ChildOutcome finish_child(RunningChild& child) {
  ::close(child.fd);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  ChildOutcome outcome;
  outcome.output = std::move(child.output);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return outcome;
}

ChildOutcome run_in_child(const std::function<std::string()>& work) {
  RunningChild child = start_child(work);
  while (!read_child_output(child)) {
  }
  return finish_child(child);
}

}  // namespace collsim
