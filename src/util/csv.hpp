#pragma once
// The little CSV that collsim reads and writes (RFC 4180 quoting: a cell with a comma, a
// quote or a newline is quoted, and quotes inside are doubled).
#include <string>
#include <vector>

namespace collsim {

std::vector<std::string> split_csv_line(const std::string& line);
std::string quote_csv_cell(const std::string& text);

// A table with a header row: each row as (column, cell) pairs in column order. Blank lines
// are skipped; a row with the wrong number of cells throws InputError naming `field`,
// `source` and the line.
using CsvRow = std::vector<std::pair<std::string, std::string>>;
std::vector<CsvRow> parse_csv_table(const std::string& text, const std::string& source, const std::string& field);

}  // namespace collsim
