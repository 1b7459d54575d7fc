#include "util/units.hpp"

#include <array>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <utility>

#include "util/errors.hpp"

namespace collsim {
namespace {

struct Unit {
  std::string_view suffix;
  double factor;
};

// Splits "64MiB" into 64 and "MiB"; rejects anything that is not a finite number first.
std::pair<double, std::string_view> split_number(std::string_view text, std::string_view field,
                                                 std::string_view what) {
  std::string owned(text);
  const char* begin = owned.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  // strtod also reads hexadecimal ("0x10"), which no documented form uses
  const bool hexadecimal = owned.find_first_of("xX") < static_cast<size_t>(end - begin);
  if (end == begin || !std::isfinite(value) || hexadecimal)
    throw InputError(fmt::format("{}: '{}' is not {} {} (examples: {})", field, text,
                                 what.front() == 'a' ? "an" : "a", what,
                                 what == "size"        ? "\"64MiB\", \"30MB\", 4096"
                                 : what == "bandwidth" ? "\"10Gbps\", \"10GBps\""
                                 : what == "time"      ? "\"1us\", \"20ms\", 0.5"
                                                       : "\"2Gf\", \"500Mf\""));
  std::string_view unit = text.substr(static_cast<size_t>(end - begin));
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  return {value, unit};
}

std::string describe_range(std::string_view what, const QuantityRange& range) {
  if (what == "size") return fmt::format("0 or 1 byte to 1 PiB ({:.0f} bytes)", range.largest);
  if (what == "time") return fmt::format("0 or {:g} s to {:g} s", range.smallest, range.largest);
  if (what == "bandwidth") return fmt::format("{:g} B/s to {:g} B/s", range.smallest, range.largest);
  return fmt::format("0 or {:g} to {:g} flops", range.smallest, range.largest);
}

template <size_t N>
double parse_with_units(std::string_view text, std::string_view field, std::string_view what,
                        const std::array<Unit, N>& units, std::string_view allowed, const QuantityRange& range) {
  auto [value, unit] = split_number(text, field, what);
  for (const Unit& u : units) {
    if (u.suffix == unit) {
      if (value < 0)
        throw InputError(fmt::format("{}: '{}' is negative; a {} must be {}", field, text, what,
                                     what == "time" ? ">= 0" : "> 0"));
      const double result = value * u.factor;
      if (result != 0 && !(result >= range.smallest && result <= range.largest))
        throw InputError(fmt::format("{}: '{}' is too {}; a {} is {}", field, text,
                                     result > range.largest ? "large" : "small", what, describe_range(what, range)));
      return result;
    }
  }
  throw InputError(fmt::format("{}: unknown unit '{}' in '{}' (allowed: {})", field, unit, text, allowed));
}

constexpr double Ki = 1024.0, Mi = Ki * 1024, Gi = Mi * 1024, Ti = Gi * 1024;

}  // namespace

double parse_size(std::string_view text, std::string_view field) {
  static const std::array<Unit, 12> units{{{"", 1}, {"B", 1}, {"KiB", Ki}, {"MiB", Mi}, {"GiB", Gi}, {"TiB", Ti},
                                          {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
                                          {"bytes", 1}}};
  return parse_with_units(text, field, "size", units, "B, KiB, MiB, GiB, TiB, kB, MB, GB, TB", size_range);
}

double parse_bandwidth(std::string_view text, std::string_view field) {
  // Lower-case 'b' is bits, upper-case 'B' is bytes, as in SimGrid platform files.
  static const std::array<Unit, 12> units{{{"Bps", 1}, {"kBps", 1e3}, {"KBps", 1e3}, {"MBps", 1e6}, {"GBps", 1e9},
                                          {"TBps", 1e12}, {"bps", 1 / 8.0}, {"kbps", 1e3 / 8}, {"Kbps", 1e3 / 8},
                                          {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8}, {"Tbps", 1e12 / 8}}};
  if (split_number(text, field, "bandwidth").second.empty())
    throw InputError(fmt::format("{}: '{}' needs a unit (Bps, MBps, GBps for bytes/s; Mbps, Gbps for bits/s)",
                                 field, text));
  const double bytes_per_second = parse_with_units(text, field, "bandwidth", units,
                                                   "Bps, kBps, MBps, GBps, TBps, bps, kbps, Mbps, Gbps, Tbps", bandwidth_range);
  if (bytes_per_second <= 0)
    throw InputError(fmt::format("{}: bandwidth must be > 0, got '{}'", field, text));
  return bytes_per_second;
}

double parse_time(std::string_view text, std::string_view field) {
  static const std::array<Unit, 6> units{{{"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9},
                                         {"min", 60}}};
  return parse_with_units(text, field, "time", units, "s, ms, us, ns, min", time_range);
}

double parse_flops(std::string_view text, std::string_view field) {
  static const std::array<Unit, 5> units{{{"f", 1}, {"kf", 1e3}, {"Mf", 1e6}, {"Gf", 1e9}, {"Tf", 1e12}}};
  return parse_with_units(text, field, "amount of computation", units, "f, kf, Mf, Gf, Tf", flops_range);
}

std::string format_size(double bytes, int digits) {
  static const std::array<const char*, 5> names{"B", "KiB", "MiB", "GiB", "TiB"};
  size_t i = 0;
  while (i + 1 < names.size() && std::fabs(bytes) >= 1024.0) {
    bytes /= 1024.0;
    ++i;
  }
  return i == 0 ? fmt::format("{:g} B", bytes) : fmt::format("{:.{}g} {}", bytes, digits, names[i]);
}

std::string format_bandwidth(double bytes_per_second, int digits) {
  static const std::array<const char*, 5> names{"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
  size_t i = 0;
  while (i + 1 < names.size() && std::fabs(bytes_per_second) >= 1000.0) {
    bytes_per_second /= 1000.0;
    ++i;
  }
  return fmt::format("{:.{}g} {}", bytes_per_second, digits, names[i]);
}

std::string format_time(double seconds) {
  const double magnitude = std::fabs(seconds);
  if (magnitude == 0) return "0 s";
  if (magnitude >= 1) return fmt::format("{:.6g} s", seconds);
  if (magnitude >= 1e-3) return fmt::format("{:.6g} ms", seconds * 1e3);
  if (magnitude >= 1e-6) return fmt::format("{:.6g} us", seconds * 1e6);
  return fmt::format("{:.6g} ns", seconds * 1e9);
}

}  // namespace collsim
