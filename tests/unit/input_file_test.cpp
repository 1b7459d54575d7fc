#include <doctest/doctest.h>

#include <string>

#include "util/errors.hpp"
#include "util/input_file.hpp"

using namespace collsim;

namespace {
std::string error_of(const std::string& text) {
  try {
    parse_json(text, "f.json");
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}
}  // namespace

TEST_CASE("JSON errors name the file, the place and the reason") {
  CHECK(error_of(R"({"collective": {"size": 1e400}})") ==
        "f.json: malformed JSON at collective.size: number overflow parsing '1e400'");
  CHECK(error_of(R"({"faults": [{"host": "a"}, {"at": 1e999}]})").find("at faults[1].at: number overflow") !=
        std::string::npos);
  CHECK(error_of("{\"a\": ").find("f.json: malformed JSON at a: at line 1, column 7") == 0);
}

TEST_CASE("JSON deeper than the bound is refused while parsing, the bound itself is fine") {
  const auto nested = [](int depth) { return std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']'); };
  CHECK(parse_json(nested(max_json_depth), "f").is_array());
  CHECK(error_of(nested(max_json_depth + 1)).find("nested deeper than 64") != std::string::npos);
  CHECK(error_of(nested(100000)).find("nested deeper than 64") != std::string::npos);
}
