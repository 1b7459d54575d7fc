#include "util/input_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <cstdint>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include "util/errors.hpp"

namespace collsim {
namespace {

std::vector<std::string>& inputs() {
  static std::vector<std::string> files;
  return files;
}

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 1,
// column 5: "; keep the position and the reason.
std::string reason_of(const std::string& what) {
  std::string message = what;
  if (const auto cut = message.find("] "); cut != std::string::npos) message = message.substr(cut + 2);
  if (message.rfind("parse error ", 0) == 0) message = message.substr(12);
  return message;
}

// Where the parser is: "collective.size", "faults[2].host", followed through a first SAX
// pass over the text so that an error can name the place. The pass also bounds the depth and
// refuses a key given twice; the tree is then built by nlohmann's plain parser. (Its
// callback parser would do both at once, but it scans the enclosing array after every
// object: 100,000 layers took seconds.)
class JsonPlace {
public:
  explicit JsonPlace(const std::string& source) : source_(source) {}

  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(std::int64_t) { return value(); }
  bool number_unsigned(std::uint64_t) { return value(); }
  bool number_float(double, const std::string&) { return value(); }
  bool string(std::string&) { return value(); }
  bool binary(std::vector<std::uint8_t>&) { return value(); }
  bool start_object(std::size_t) { return open(false); }
  bool start_array(std::size_t) { return open(true); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& name) {
    Frame& frame = frames_.back();
    frame.key = name;
    // nlohmann keeps the last of two equal keys: {"workers": 4, "workers": 5} would
    // silently drop a value the user wrote
    if (!frame.keys.insert(name).second)
      throw InputError(fmt::format("{}: JSON key given twice at {}", source_, path()));
    return true;
  }
  template <typename Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& error) {
    throw InputError(fmt::format("{}: malformed JSON at {}: {}", source_, path(), reason_of(error.what())));
  }

  std::string path() const {
    std::string text;
    for (const Frame& frame : frames_) {
      if (frame.array) {
        text += fmt::format("[{}]", std::max(frame.index, 0));
      } else if (!frame.key.empty()) {
        if (!text.empty()) text += '.';
        text += frame.key;
      }
    }
    return text.empty() ? "the top level" : text;
  }

private:
  struct Frame {
    bool array;
    int index;        // the element being read, in an array
    std::string key;  // the key being read, in an object
    std::set<std::string> keys = {};  // the keys read so far, in an object
  };
  bool value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return true;
  }
  bool open(bool array) {
    value();
    if (static_cast<int>(frames_.size()) >= max_json_depth)
      throw InputError(fmt::format("{}: JSON nested deeper than {} levels at {}", source_, max_json_depth, path()));
    frames_.push_back({array, -1, ""});
    return true;
  }
  bool close() {
    if (!frames_.empty()) frames_.pop_back();
    return true;
  }

  const std::string& source_;
  std::vector<Frame> frames_;
};

template <typename Json>
Json parse_bounded(const std::string& text, const std::string& source) {
  JsonPlace place(source);
  Json::sax_parse(text, &place);  // throws InputError naming the place
  try {
    return Json::parse(text);
  } catch (const typename Json::exception& error) {
    throw InputError(fmt::format("{}: malformed JSON: {}", source, reason_of(error.what())));
  }
}

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what) {
  // O_NONBLOCK: opening a FIFO with no writer must not wait; it is refused below anyway.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) throw InputError(fmt::format("{}: cannot read the {} (does it exist?)", path, what));
    throw InputError(fmt::format("{}: cannot read the {}: {}", path, what, std::strerror(errno)));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw InputError(fmt::format("{}: the {} is {}; give a regular file", path, what, file_kind(info.st_mode)));
  }
  if (info.st_size > max_input_bytes) {
    ::close(fd);
    throw InputError(fmt::format("{}: the {} is {} bytes; input files are limited to {} bytes", path, what,
                                 static_cast<long long>(info.st_size), max_input_bytes));
  }
  std::string contents;
  contents.reserve(static_cast<size_t>(info.st_size));
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw InputError(fmt::format("{}: cannot read the {}: {}", path, what, std::strerror(error)));
    }
    if (n == 0) break;
    contents.append(chunk, static_cast<size_t>(n));
    if (static_cast<long long>(contents.size()) > max_input_bytes) {
      ::close(fd);
      throw InputError(fmt::format("{}: the {} grows past {} bytes while read", path, what, max_input_bytes));
    }
  }
  ::close(fd);
  // Every input is text (JSON, XML, CSV): a parser stopping at a NUL byte would take a file
  // that ends in garbage ({"workers": 4}\0...) for a good one.
  if (const size_t nul = contents.find('\0'); nul != std::string::npos)
    throw InputError(fmt::format("{}: the {} has a NUL byte at offset {}: not a text file", path, what, nul));
  inputs().push_back(path);
  return contents;
}

const std::vector<std::string>& input_files() { return inputs(); }

void release_input_file(const std::string& path) {
  auto& files = inputs();
  files.erase(std::remove(files.begin(), files.end(), path), files.end());
}

nlohmann::json parse_json(const std::string& text, const std::string& source) {
  return parse_bounded<nlohmann::json>(text, source);
}

nlohmann::ordered_json parse_ordered_json(const std::string& text, const std::string& source) {
  return parse_bounded<nlohmann::ordered_json>(text, source);
}

}  // namespace collsim
