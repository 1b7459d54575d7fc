#pragma once
// Errors that reach the user as one line and exit status 2 (bad input or usage).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace collsim {

class InputError : public std::runtime_error {
public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// An error message as the one line the user sees: the user's own text quoted in it (a
// placement "n0\n", an algorithm "ring\r") must not break it, so control characters are
// written as escapes.
inline std::string one_line(std::string_view message) {
  std::string line;
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') line += "\\n";
    else if (c == '\r') line += "\\r";
    else if (c == '\t') line += "\\t";
    else if (byte < 0x20 || byte == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\x%02x", byte);
      line += escape;
    } else {
      line += c;
    }
  }
  // A line a person can read: a value of a million characters (an unknown key, a path)
  // keeps its head and the line its end, which says what is allowed.
  constexpr size_t most = 4000, head = 2500, tail = 1000;
  if (line.size() > most)
    line = line.substr(0, head) + "... (" + std::to_string(line.size() - head - tail) + " characters left out) ..." +
           line.substr(line.size() - tail);
  return line;
}

// A user's text quoted in a message, at most `most` characters of it.
inline std::string clipped(const std::string& text, size_t most = 200) {
  return text.size() <= most ? text : text.substr(0, most) + "...";
}

}  // namespace collsim
