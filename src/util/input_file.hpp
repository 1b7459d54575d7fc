#pragma once
// Input files as collsim reads them: regular files only (never a FIFO, a device or a
// folder, which could be read forever), within a size limit, and JSON whose every error
// (syntax, a number too large, nesting too deep) names the file, the place and the reason.
// Every file read this way is remembered, so that no output can replace one of the run's
// inputs (util/atomic_file.hpp).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace collsim {

// Inputs larger than this are refused before they are read (the largest traces collsim
// writes, with --detail full at p = 1024, are a few hundred MB).
constexpr long long max_input_bytes = 2LL << 30;
// JSON nested deeper than this is refused while it is parsed: collsim's own files nest
// fewer than 10 levels, and rendering a value nested 100,000 deep would overflow the stack.
constexpr int max_json_depth = 64;

// The contents of `path`; an InputError such as "s.json: the scenario file is a FIFO (named
// pipe); give a regular file" if it is not a readable regular file (`what` names it).
std::string read_input_file(const std::string& path, const std::string& what);

// The files read so far by read_input_file, as given.
const std::vector<std::string>& input_files();
// `path` is read and then rewritten on purpose (the results table that --resume extends).
void release_input_file(const std::string& path);

// Parses `text` (read from `source`), bounded in depth. Errors are InputError:
// "SOURCE: malformed JSON at collective.size: number overflow parsing '1e400'".
nlohmann::json parse_json(const std::string& text, const std::string& source);
nlohmann::ordered_json parse_ordered_json(const std::string& text, const std::string& source);

}  // namespace collsim
