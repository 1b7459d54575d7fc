#include "scenario/json_fields.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "util/errors.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"

using nlohmann::json;

namespace collsim {
namespace {

std::string join_path(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

}  // namespace

// Unknown keys are errors: a typo must never be silently ignored.
void check_keys(const json& object, const std::string& where, const std::vector<std::string>& allowed) {
  if (!object.is_object())
    throw InputError(fmt::format("{}: must be a JSON object", where.empty() ? "scenario" : where));
  // every unknown key at once: fixing one typo should not reveal the next
  std::vector<std::string> unknown;
  for (const auto& [key, value] : object.items())
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      // a key is echoed whole up to 64 characters (one of a million once filled the line)
      unknown.push_back(join_path(where, key.size() > 64 ? key.substr(0, 60) + "..." : key) + ": unknown key" +
                        did_you_mean(key, allowed));
  if (!unknown.empty()) throw InputError(fmt::format("{}; allowed: {}", join(unknown, "; "), join(allowed)));
}

// A host or link name: not empty, printable, no spaces (SimGrid's names never have them).
void check_name(const std::string& name, const std::string& field) {
  if (name.empty()) throw InputError(fmt::format("{}: the name is empty", field));
  for (const char c : name)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
      throw InputError(fmt::format("{}: {} has a space or a control character; names are printable, without spaces",
                                   field, json(name).dump()));
}

// A label the pictures print (a layer's name): not empty, no control characters.
void check_label(const std::string& name, const std::string& field) {
  if (name.empty()) throw InputError(fmt::format("{}: the name is empty", field));
  for (const char c : name)
    if (static_cast<unsigned char>(c) < ' ' || c == 0x7f)
      throw InputError(fmt::format("{}: {} has a control character", field, json(name).dump()));
}

std::string get_string(const json& value, const std::string& field) {
  if (!value.is_string()) throw InputError(fmt::format("{}: must be a string, got {}", field, value.dump()));
  return value.get<std::string>();
}

// A label given as a string (the scenario's name: the trace's identity in compare and the
// pictures' title).
std::string get_label(const json& value, const std::string& field) {
  std::string label = get_string(value, field);
  check_label(label, field);
  return label;
}

long long get_integer(const json& value, const std::string& field, long long min, long long max) {
  if (!value.is_number_integer() && !value.is_number_unsigned())
    throw InputError(fmt::format("{}: must be an integer, got {}", field, value.dump()));
  // above 2^63 an unsigned value would wrap to a negative long long: compared as written
  if (value.is_number_unsigned() && value.get<unsigned long long>() > static_cast<unsigned long long>(max))
    throw InputError(fmt::format("{}: {} is out of range; allowed: {} to {}", field, value.dump(), min, max));
  const long long number = value.get<long long>();
  if (number < min || number > max)
    throw InputError(fmt::format("{}: {} is out of range; allowed: {} to {}", field, number, min, max));
  return number;
}

// Sizes and times may be unit strings ("64MiB", "20ms") or plain numbers (bytes, seconds).
double get_quantity(const json& value, const std::string& field, double (*parse)(std::string_view, std::string_view)) {
  if (value.is_number()) {
    const double number = value.get<double>();
    if (number < 0)
      throw InputError(fmt::format("{}: {} is negative; must be {}", field, value.dump(),
                                   parse == parse_time ? ">= 0 seconds" : "> 0 bytes"));
    // the same range checks as a unit string ("1e308" bytes is too large)
    return parse(fmt::format("{}", number), field);
  }
  if (value.is_string()) return parse(value.get<std::string>(), field);
  throw InputError(fmt::format("{}: must be a number or a string with a unit, got {}", field, value.dump()));
}

}  // namespace collsim
