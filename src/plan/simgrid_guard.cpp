#include "plan/simgrid_guard.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unistd.h>

#include <fmt/format.h>

// mimalloc (linked into collsim, not into the test programs) aborts on a failed `new`
// without calling the new-handler; its error callback tells us why it aborts.
extern "C" void mi_register_error(void (*handler)(int error, void* arg), void* arg) __attribute__((weak));

namespace collsim {
namespace {

int saved_stderr = -1;  // the real stderr while SimGrid's output is captured
int capture_fd = -1;    // the temporary file that receives it
char context[1024] = "SimGrid";
constexpr int crash_signals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP};

// Copies the capture file to the real stderr.
void forward_capture() {
  if (capture_fd < 0 || saved_stderr < 0) return;
  char buffer[4096];
  ::lseek(capture_fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(capture_fd, buffer, sizeof buffer)) > 0;)
    if (::write(saved_stderr, buffer, static_cast<size_t>(n)) < 0) break;
}

volatile bool out_of_memory = false;  // set when an allocation failed: the abort that follows says so
volatile bool reading_input = true;   // false once the engine runs the plan (simulating)
bool progress_on = false;             // --progress
std::chrono::steady_clock::time_point progress_start;

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

// Async-signal-safe: write everything of `text`, or give up.
void say(int out, const char* text) {
  if (::write(out, text, std::strlen(text)) < 0) _exit(1);
}

// The last line SimGrid logged (without its "[time] [category/CRITICAL] " prefix), read
// back from the capture file into `text`; "" if it said nothing.
const char* last_simgrid_line(char* text, size_t capacity) {
  size_t length = 0;
  if (capture_fd >= 0) {
    const off_t size = ::lseek(capture_fd, 0, SEEK_END);
    const off_t from = size > static_cast<off_t>(capacity - 1) ? size - static_cast<off_t>(capacity - 1) : 0;
    ::lseek(capture_fd, from, SEEK_SET);
    for (ssize_t n; length < capacity - 1 && (n = ::read(capture_fd, text + length, capacity - 1 - length)) > 0;)
      length += static_cast<size_t>(n);
  }
  while (length > 0 && (text[length - 1] == '\n' || text[length - 1] == ' ')) --length;
  text[length] = '\0';
  const char* message = text;
  for (size_t i = 0; i < length; ++i)
    if (text[i] == '\n') message = text + i + 1;
  for (const char* p = message; *p != '\0'; ++p)
    if (p[0] == ']' && p[1] == ' ' && p - message >= 8 && std::strncmp(p - 8, "CRITICAL", 8) == 0) return p + 2;
  return "";  // no CRITICAL line: SimGrid did not stop on purpose
}

const char* signal_text(int signal) {
  switch (signal) {
    case SIGSEGV: return "segmentation fault (SIGSEGV)";
    case SIGBUS: return "bus error (SIGBUS)";
    case SIGFPE: return "arithmetic exception (SIGFPE)";
    case SIGILL: return "illegal instruction (SIGILL)";
    case SIGTRAP: return "trap (SIGTRAP)";
    default: return "abort (SIGABRT)";
  }
}

// Async-signal-safe: only read, write and _exit. SimGrid stopping on purpose (an abort
// after its CRITICAL line) while it reads the input is an input error (exit 2, its line);
// any other crash is collsim's or SimGrid's bug, never the input's: exit 1, "internal error".
void on_crash(int signal) {
  const int out = saved_stderr >= 0 ? saved_stderr : 2;
  if (out_of_memory) {
    say(out, "collsim: error: out of memory while simulating (README \"Limits\": carry fewer elements or use fewer "
             "ranks)\n");
    _exit(2);
  }
  static char text[8192];
  const char* message = last_simgrid_line(text, sizeof text);
  if (signal == SIGABRT && *message != '\0' && reading_input) {
    say(out, "collsim: error: ");
    say(out, context);
    say(out, ": ");
    say(out, message);
    say(out, "\n");
    _exit(2);
  }
  say(out, "collsim: internal error: ");
  say(out, signal_text(signal));
  say(out, reading_input ? " while reading the input (" : " while simulating (");
  say(out, context);
  say(out, *message != '\0' ? "; SimGrid said: " : "");
  say(out, message);
  say(out, "); this is a bug, not a problem of the input: please report it with the scenario\n");
  _exit(1);
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
  for (const int signal : crash_signals) std::signal(signal, SIG_DFL);
  forward_capture();
  ::dup2(saved_stderr, 2);
  ::close(saved_stderr);
  ::close(capture_fd);
  saved_stderr = capture_fd = -1;
}

void SimGridGuard::set_context(const std::string& text) {
  std::snprintf(context, sizeof context, "%s", text.c_str());
  reading_input = true;
}

void SimGridGuard::simulating(const std::string& what) {
  std::snprintf(context, sizeof context, "%s", what.c_str());
  reading_input = false;
  progress_line("simulating " + what);
}

void SimGridGuard::discard() {
  if (capture_fd < 0) return;
  std::fflush(stderr);
  if (::ftruncate(capture_fd, 0) != 0) return;
  ::lseek(capture_fd, 0, SEEK_SET);
}

void SimGridGuard::catch_crashes() {
  for (const int signal : crash_signals) std::signal(signal, on_crash);
  std::set_new_handler(on_allocation_failure);
  if (mi_register_error != nullptr) mi_register_error(on_allocator_error, nullptr);
}

void enable_progress() {
  progress_on = true;
  progress_start = std::chrono::steady_clock::now();
}

bool progress_enabled() { return progress_on; }

void progress_line(const std::string& text) {
  if (!progress_on) return;
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - progress_start;
  const std::string line = fmt::format("collsim: {} ({:.1f} s wall)\n", text, wall.count());
  // One write: the line arrives whole even when a sweep's or auto's children share the terminal.
  if (::write(saved_stderr >= 0 ? saved_stderr : 2, line.data(), line.size()) < 0) return;
}

}  // namespace collsim
