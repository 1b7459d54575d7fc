#pragma once
// The little CSV that collsim reads and writes (RFC 4180 quoting: a cell with a comma, a
// quote or a newline is quoted, and quotes inside are doubled).
#include <string>
#include <vector>

namespace collsim {

std::vector<std::string> split_csv_line(const std::string& line);
std::string quote_csv_cell(const std::string& text);

}  // namespace collsim
