#pragma once
// Output files appear whole or not at all: write to a temporary beside the
// target, then rename over it. A failed run leaves no half-written file.
#include <string>

namespace collsim {

// `field` names the option that asked for the file, for the error message.
void write_file_atomically(const std::string& path, const std::string& contents, const std::string& field);

}  // namespace collsim
