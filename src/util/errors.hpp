#pragma once
// Errors that reach the user as one line and exit status 2 (bad input or usage).
#include <stdexcept>
#include <string>

namespace collsim {

class InputError : public std::runtime_error {
public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace collsim
