#include "util/atomic_file.hpp"

#include <array>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/errors.hpp"
#include "util/input_file.hpp"

namespace collsim {
namespace fs = std::filesystem;
namespace {

// The temporaries being written, for the signal handler: fixed storage, no allocation.
constexpr size_t max_temporaries = 128;
std::array<char[PATH_MAX], max_temporaries> temporaries{};

void remember_temporary(const std::string& path) {
  for (auto& slot : temporaries)
    if (slot[0] == '\0') {
      std::snprintf(slot, sizeof slot, "%s", path.c_str());
      return;
    }
}

void forget_temporary(const std::string& path) {
  for (auto& slot : temporaries)
    if (path == slot) slot[0] = '\0';
}

void on_interrupt(int signal) {
  for (auto& slot : temporaries)
    if (slot[0] != '\0') ::unlink(slot);
  _exit(128 + signal);
}

// A renamed-over temporary keeps the pid: two runs writing the same file do not collide.
constexpr size_t temporary_suffix = 24;  // ".tmp.<pid>", with room to spare

struct Pending {
  std::string temporary, target, field;
};
bool batching = false;
std::vector<Pending> pending;

// Where the bytes of `path` go: the file a symbolic link points to, else the path itself.
fs::path real_target(const std::string& path, const std::string& field) {
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(path, ec);
  if (!fs::is_symlink(link)) return fs::path(path);
  const fs::path target = fs::canonical(path, ec);
  if (ec) throw InputError(fmt::format("{}: '{}' is a symbolic link to nowhere: {}", field, path, ec.message()));
  return target;
}

std::string kind_of(const fs::file_status& status) {
  switch (status.type()) {
    case fs::file_type::directory: return "a folder";
    case fs::file_type::fifo: return "a FIFO (named pipe)";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

void rename_into_place(const Pending& file) {
  if (std::rename(file.temporary.c_str(), file.target.c_str()) != 0) {
    const int error = errno;
    std::remove(file.temporary.c_str());
    forget_temporary(file.temporary);
    throw InputError(fmt::format("{}: cannot write '{}': {}", file.field, file.target, std::strerror(error)));
  }
  forget_temporary(file.temporary);
}

// The outputs checked so far and the option of each: two options of one run naming the
// same file would write it twice (the second as "File exists" after the whole run).
std::vector<std::pair<fs::path, std::string>>& claimed_outputs() {
  static std::vector<std::pair<fs::path, std::string>> outputs;
  return outputs;
}

void claim_output(const fs::path& target, const std::string& path, const std::string& field) {
  std::error_code ec;
  const fs::path where = fs::weakly_canonical(target, ec);
  for (const auto& [other, other_field] : claimed_outputs())
    if (other == where && other_field != field)
      throw InputError(fmt::format("{}: '{}' is also the file of {}; give each output its own file", field, path,
                                   other_field));
  claimed_outputs().emplace_back(where, field);
}

}  // namespace

void check_output_path(const std::string& path, const std::string& field) {
  if (path.empty()) throw InputError(fmt::format("{}: the file name is empty", field));
  if (path.size() >= PATH_MAX) throw InputError(fmt::format("{}: the path is longer than {} bytes", field, PATH_MAX));
  // refused before anything is made ("o.x/" made the folder o.x, then failed to write it)
  const fs::path named(path);
  if (!named.has_filename() || named.filename() == "." || named.filename() == "..")
    throw InputError(fmt::format("{}: '{}' names a folder; give a file name", field, path));
  const fs::path target = real_target(path, field);
  std::error_code ec;
  const fs::file_status status = fs::status(target, ec);
  if (fs::exists(status)) {
    if (!fs::is_regular_file(status))
      throw InputError(fmt::format("{}: cannot write '{}': it is {}", field, path, kind_of(status)));
    for (const std::string& input : input_files())
      if (fs::equivalent(target, input, ec))
        throw InputError(fmt::format("{}: '{}' is one of the run's inputs; write the output elsewhere", field, path));
  }
  for (const fs::path& part : target)
    if (part.string().size() + temporary_suffix > NAME_MAX)
      throw InputError(fmt::format("{}: the name '{}...' is longer than {} bytes", field, part.string().substr(0, 32),
                                   NAME_MAX - temporary_suffix));
  // The nearest folder that exists must be a writable folder (the rest is created).
  fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  while (!fs::exists(folder, ec)) {
    // a relative path's first missing folder is created in the working folder
    if (!folder.has_parent_path() || folder == folder.parent_path()) {
      folder = ".";
      break;
    }
    folder = folder.parent_path();
  }
  if (!fs::is_directory(folder, ec))
    throw InputError(fmt::format("{}: cannot write '{}': '{}' is not a folder", field, path, folder.string()));
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw InputError(fmt::format("{}: cannot write '{}': folder '{}': {}", field, path, folder.string(),
                                 std::strerror(errno)));
  claim_output(target, path, field);
}

void write_file_atomically(const std::string& path, const std::string& contents, const std::string& field) {
  check_output_path(path, field);
  const fs::path target = real_target(path, field);
  if (target.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec) throw InputError(fmt::format("{}: cannot create folder '{}': {}", field, target.parent_path().string(), ec.message()));
  }
  const std::string temporary = fmt::format("{}.tmp.{}", target.string(), getpid());
  remember_temporary(temporary);
  // O_EXCL: never write through whatever might sit at the temporary's name.
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  bool written = fd >= 0;
  int error = fd >= 0 ? 0 : errno;
  for (size_t done = 0; written && done < contents.size();) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = errno;
      written = false;
    } else {
      done += static_cast<size_t>(n);
    }
  }
  if (fd >= 0 && ::close(fd) != 0 && written) {
    error = errno;
    written = false;
  }
  if (!written) {
    if (fd >= 0) std::remove(temporary.c_str());
    forget_temporary(temporary);
    throw InputError(fmt::format("{}: cannot write '{}': {}", field, path, std::strerror(error)));
  }
  const Pending file{temporary, target.string(), field};
  if (batching) pending.push_back(file);
  else rename_into_place(file);
}

OutputBatch::OutputBatch() {
  batching = true;
  pending.clear();
}

OutputBatch::~OutputBatch() {
  for (const Pending& file : pending) {
    std::remove(file.temporary.c_str());
    forget_temporary(file.temporary);
  }
  pending.clear();
  batching = false;
}

void OutputBatch::commit() {
  batching = false;
  std::vector<Pending> files;
  files.swap(pending);
  for (size_t i = 0; i < files.size(); ++i) {
    try {
      rename_into_place(files[i]);
    } catch (...) {
      for (size_t j = i + 1; j < files.size(); ++j) {
        std::remove(files[j].temporary.c_str());
        forget_temporary(files[j].temporary);
      }
      throw;
    }
  }
}

void remove_temporaries_on_interrupt() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

}  // namespace collsim
