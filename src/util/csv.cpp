#include "util/csv.hpp"

#include <fmt/format.h>
#include <sstream>

#include "util/errors.hpp"

namespace collsim {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      cell += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += c;
    }
  }
  cells.push_back(cell);
  return cells;
}

std::string quote_csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::vector<CsvRow> parse_csv_table(const std::string& text, const std::string& source, const std::string& field) {
  std::stringstream lines(text);
  std::string line;
  std::vector<CsvRow> rows;
  if (!std::getline(lines, line)) return rows;
  const auto header = split_csv_line(line);
  for (int number = 2; std::getline(lines, line); ++number) {
    if (line.empty()) continue;
    const auto cells = split_csv_line(line);
    if (cells.size() != header.size())
      throw InputError(fmt::format("{}: '{}' line {} has {} cells for {} columns", field, source, number, cells.size(),
                                   header.size()));
    CsvRow row;
    for (size_t i = 0; i < header.size(); ++i) row.emplace_back(header[i], cells[i]);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace collsim
