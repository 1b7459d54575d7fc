#include "plan/simgrid_guard.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unistd.h>

// mimalloc (linked into collsim, not into the test programs) aborts on a failed `new`
// without calling the new-handler; its error callback tells us why it aborts.
extern "C" void mi_register_error(void (*handler)(int error, void* arg), void* arg) __attribute__((weak));

namespace collsim {
namespace {

int saved_stderr = -1;  // the real stderr while SimGrid's output is captured
int capture_fd = -1;    // the temporary file that receives it
char context[1024] = "SimGrid";

// Copies the capture file to the real stderr.
void forward_capture() {
  if (capture_fd < 0 || saved_stderr < 0) return;
  char buffer[4096];
  ::lseek(capture_fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(capture_fd, buffer, sizeof buffer)) > 0;)
    if (::write(saved_stderr, buffer, static_cast<size_t>(n)) < 0) break;
}

volatile bool out_of_memory = false;  // set when an allocation failed: the abort that follows says so

// An allocation failed inside the simulation, where the exception may not reach main:
// remember it, so that the abort is reported as what it is.
void on_allocation_failure() {
  out_of_memory = true;
  std::set_new_handler(nullptr);
  throw std::bad_alloc();
}

void on_allocator_error(int error, void*) {
  if (error == ENOMEM) out_of_memory = true;
}

// Async-signal-safe: only read, write and _exit. Reports the last thing SimGrid said.
void on_crash(int signal) {
  if (out_of_memory) {
    const char* text = "collsim: error: out of memory while simulating (README \"Limits\": carry fewer elements or "
                       "use fewer ranks)\n";
    if (::write(saved_stderr >= 0 ? saved_stderr : 2, text, std::strlen(text)) < 0) _exit(2);
    _exit(2);
  }
  static char text[8192];
  size_t length = 0;
  if (capture_fd >= 0) {
    const off_t size = ::lseek(capture_fd, 0, SEEK_END);
    const off_t from = size > static_cast<off_t>(sizeof text - 1) ? size - static_cast<off_t>(sizeof text - 1) : 0;
    ::lseek(capture_fd, from, SEEK_SET);
    for (ssize_t n; length < sizeof text - 1 && (n = ::read(capture_fd, text + length, sizeof text - 1 - length)) > 0;)
      length += static_cast<size_t>(n);
  }
  while (length > 0 && (text[length - 1] == '\n' || text[length - 1] == ' ')) --length;
  text[length] = '\0';
  // The message is the last line; drop SimGrid's "[time] [category/CRITICAL] " prefix.
  const char* message = text;
  for (size_t i = 0; i < length; ++i)
    if (text[i] == '\n') message = text + i + 1;
  for (const char* p = message; *p != '\0'; ++p)
    if (p[0] == ']' && p[1] == ' ' && p > message && std::strncmp(p - 8, "CRITICAL", 8) == 0) message = p + 2;
  const int out = saved_stderr >= 0 ? saved_stderr : 2;
  const char* head = "collsim: error: ";
  if (::write(out, head, std::strlen(head)) < 0 || ::write(out, context, std::strlen(context)) < 0 ||
      ::write(out, ": ", 2) < 0)
    _exit(2);
  if (*message == '\0') message = signal == SIGSEGV ? "segmentation fault (check the platform file)" : "aborted";
  if (::write(out, message, std::strlen(message)) < 0) _exit(2);
  if (::write(out, "\n", 1) < 0) _exit(2);
  _exit(2);
}

}  // namespace

SimGridGuard::SimGridGuard() {
  char name[] = "/tmp/collsim-simgrid-XXXXXX";
  capture_fd = ::mkstemp(name);
  if (capture_fd < 0) return;
  ::unlink(name);
  std::fflush(stderr);
  saved_stderr = ::dup(2);
  ::dup2(capture_fd, 2);
}

SimGridGuard::~SimGridGuard() {
  if (capture_fd < 0) return;
  std::fflush(stderr);
  std::signal(SIGABRT, SIG_DFL);
  std::signal(SIGSEGV, SIG_DFL);
  forward_capture();
  ::dup2(saved_stderr, 2);
  ::close(saved_stderr);
  ::close(capture_fd);
  saved_stderr = capture_fd = -1;
}

void SimGridGuard::set_context(const std::string& text) {
  std::snprintf(context, sizeof context, "%s", text.c_str());
}

void SimGridGuard::discard() {
  if (capture_fd < 0) return;
  std::fflush(stderr);
  if (::ftruncate(capture_fd, 0) != 0) return;
  ::lseek(capture_fd, 0, SEEK_SET);
}

void SimGridGuard::catch_crashes() {
  std::signal(SIGABRT, on_crash);
  std::signal(SIGSEGV, on_crash);
  std::set_new_handler(on_allocation_failure);
  if (mi_register_error != nullptr) mi_register_error(on_allocator_error, nullptr);
}

}  // namespace collsim
