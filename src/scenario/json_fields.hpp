#pragma once
// Reading a scenario's JSON fields, each error naming the field (scenario.cpp and the
// sections parsed beside it: training_spec.cpp, nccl_spec.cpp).
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace collsim {

// Unknown keys are errors: a typo must never be silently ignored.
void check_keys(const nlohmann::json& object, const std::string& where, const std::vector<std::string>& allowed);
// A host or link name: not empty, printable, no spaces.
void check_name(const std::string& name, const std::string& field);
// A label the pictures print: not empty, no control characters.
void check_label(const std::string& name, const std::string& field);
std::string get_string(const nlohmann::json& value, const std::string& field);
std::string get_label(const nlohmann::json& value, const std::string& field);
long long get_integer(const nlohmann::json& value, const std::string& field, long long min, long long max);
// Sizes and times may be unit strings ("64MiB", "20ms") or plain numbers (bytes, seconds):
// `parse` is util/units.hpp's parse_size or parse_time.
double get_quantity(const nlohmann::json& value, const std::string& field,
                    double (*parse)(std::string_view, std::string_view));

}  // namespace collsim
