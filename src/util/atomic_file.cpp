#include "util/atomic_file.hpp"

#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <unistd.h>

#include "util/errors.hpp"

namespace collsim {

void write_file_atomically(const std::string& path, const std::string& contents, const std::string& field) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (fs::is_directory(target)) throw InputError(fmt::format("{}: cannot write '{}': it is a folder", field, path));
  if (target.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec) throw InputError(fmt::format("{}: cannot create folder '{}': {}", field, target.parent_path().string(), ec.message()));
  }
  const std::string temporary = fmt::format("{}.tmp.{}", path, getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << contents;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw InputError(fmt::format("{}: cannot write '{}'", field, path));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw InputError(fmt::format("{}: cannot write '{}'", field, path));
  }
}

}  // namespace collsim
