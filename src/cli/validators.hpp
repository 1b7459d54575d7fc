#pragma once
// Range checks that CLI11 runs while parsing, so that the error names the flag before any
// work starts ("--inter-flows: 0 must be >= 1").
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string>

#include "util/errors.hpp"

namespace collsim::cli {

namespace detail {
// The error for `input` as a whole number, or "" when it is one (then in `value`).
inline std::string read_whole_number(const std::string& input, long long& value) {
  const auto [end, error] = std::from_chars(input.data(), input.data() + input.size(), value);
  if (error != std::errc{} || end != input.data() + input.size())
    return fmt::format("'{}' is not a whole number", input);
  return {};
}
}  // namespace detail

// A whole number of at least `min`.
inline CLI::Validator at_least(long long min) {
  return CLI::Validator(
      [min](std::string& input) -> std::string {
        long long value = 0;
        if (auto error = detail::read_whole_number(input, value); !error.empty()) return error;
        return value < min ? fmt::format("{} must be >= {}", input, min) : std::string{};
      },
      fmt::format("INT >= {}", min));
}

// A whole number from `min` to `max`, worded as the scenario's own range errors.
inline CLI::Validator in_range(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& input) -> std::string {
        long long value = 0;
        if (auto error = detail::read_whole_number(input, value); !error.empty()) return error;
        if (value < min || value > max) return fmt::format("{} is out of range; allowed: {} to {}", input, min, max);
        return {};
      },
      fmt::format("INT in {}..{}", min, max));
}

// `--size ""` or `--trace ""` would read as the flag left out (every flag's default is an
// empty string): an empty value is refused instead of silently ignored.
inline void refuse_empty_values(const CLI::App& app) {
  for (const CLI::App* command : app.get_subcommands()) {
    for (const CLI::Option* option : command->get_options()) {
      const auto& values = option->results();
      if (std::any_of(values.begin(), values.end(), [](const std::string& value) { return value.empty(); }))
        throw InputError(fmt::format("{}: the value is empty", option->get_name()));
    }
    refuse_empty_values(*command);
  }
}

}  // namespace collsim::cli
