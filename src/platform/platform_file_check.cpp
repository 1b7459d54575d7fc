#include "platform/platform_file_check.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <vector>

#include "platform/network_model.hpp"
#include "util/errors.hpp"
#include "util/suggest.hpp"
#include "util/input_file.hpp"
#include "util/units.hpp"

namespace collsim {
namespace {

struct Tag {
  std::string name;
  std::map<std::string, std::string> attributes;
  bool closing = false;      // </name>
  bool self_closing = false;  // <name ... />
  int line = 1;
};

// The tags of an XML document in order (comments, declarations and text skipped). Enough
// for SimGrid's platform format, which has no text content.
std::vector<Tag> read_tags(const std::string& xml, const std::string& path) {
  std::vector<Tag> tags;
  int line = 1;
  size_t i = 0;
  auto fail = [&](const std::string& problem) {
    throw InputError(fmt::format("topology: '{}' line {}: {}", path, line, problem));
  };
  while (i < xml.size()) {
    if (xml[i] == '\n') ++line;
    if (xml[i] != '<') {
      ++i;
      continue;
    }
    const char* skip_to = xml.compare(i, 4, "<!--") == 0 ? "-->" : xml.compare(i, 2, "<?") == 0 ? "?>"
                          : xml.compare(i, 2, "<!") == 0 ? ">" : nullptr;
    if (skip_to != nullptr) {
      const size_t end = xml.find(skip_to, i);
      if (end == std::string::npos) fail("unterminated comment or declaration");
      line += static_cast<int>(std::count(xml.begin() + static_cast<long>(i), xml.begin() + static_cast<long>(end), '\n'));
      i = end + std::string_view(skip_to).size();
      continue;
    }
    Tag tag;
    tag.line = line;
    size_t j = i + 1;
    if (j < xml.size() && xml[j] == '/') {
      tag.closing = true;
      ++j;
    }
    auto is_name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ':'; };
    while (j < xml.size() && is_name_char(xml[j])) tag.name += xml[j++];
    if (tag.name.empty()) fail("a '<' that opens no element");
    for (;;) {
      while (j < xml.size() && std::isspace(static_cast<unsigned char>(xml[j]))) {
        if (xml[j] == '\n') ++line;
        ++j;
      }
      if (j >= xml.size()) fail(fmt::format("element <{}> is not closed", tag.name));
      if (xml[j] == '>') break;
      if (xml[j] == '/' && j + 1 < xml.size() && xml[j + 1] == '>') {
        tag.self_closing = true;
        ++j;
        break;
      }
      std::string key;
      while (j < xml.size() && is_name_char(xml[j])) key += xml[j++];
      if (key.empty() || j + 1 >= xml.size() || xml[j] != '=' || (xml[j + 1] != '"' && xml[j + 1] != '\''))
        fail(fmt::format("malformed attribute in <{}>", tag.name));
      const char quote = xml[j + 1];
      const size_t end = xml.find(quote, j + 2);
      if (end == std::string::npos) fail(fmt::format("unterminated attribute {} in <{}>", key, tag.name));
      tag.attributes[key] = xml.substr(j + 2, end - j - 2);
      j = end + 1;
    }
    tags.push_back(std::move(tag));
    i = j + 1;
  }
  return tags;
}

// The number at the start of a SimGrid value ("125MBps", "1e-6s", "1Gf").
double leading_number(const std::string& text, bool& ok, std::string& unit) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  ok = end != text.c_str();
  unit = end;
  return value;
}

// Hosts named by a radical: "0-99", "1,3,5-7".
long long radical_count(const std::string& radical, const std::string& where) {
  long long count = 0;
  size_t start = 0;
  while (start <= radical.size()) {
    const size_t comma = std::min(radical.find(',', start), radical.size());
    const std::string item = radical.substr(start, comma - start);
    const size_t dash = item.find('-');
    char* end = nullptr;
    errno = 0;
    const long long first = std::strtoll(item.c_str(), &end, 10);
    long long last = first;
    if (dash != std::string::npos && errno == 0) last = std::strtoll(item.c_str() + dash + 1, &end, 10);
    if (item.empty() || *end != '\0' || first < 0 || last < first)
      throw InputError(fmt::format("{}: radical '{}' is not a list of ranges such as 0-15", where, radical));
    // SimGrid reads host numbers as int: a larger one (or one that overflows here) names no host
    if (errno == ERANGE || last > std::numeric_limits<int>::max())
      throw InputError(fmt::format("{}: radical '{}' numbers a host beyond {}", where, radical,
                                   std::numeric_limits<int>::max()));
    count += last - first + 1;
    if (count > (1LL << 40)) break;
    start = comma + 1;
  }
  return count;
}

enum class Quantity { bandwidth, speed, latency };

// What a SimGrid unit multiplies its number by ("GBps" 1e9, "Gbps" 1e9 / 8, "Mf" 1e6,
// "ms" 1e-3), or 0 for a unit this scan does not know (SimGrid then judges it alone).
double unit_scale(Quantity quantity, std::string unit) {
  if (quantity == Quantity::latency) {
    static const std::map<std::string, double> times{{"", 1},   {"s", 1},     {"ms", 1e-3},  {"us", 1e-6}, {"ns", 1e-9},
                                                     {"ps", 1e-12}, {"m", 60}, {"h", 3600}, {"d", 86400}, {"w", 604800}};
    const auto it = times.find(unit);
    return it == times.end() ? 0 : it->second;
  }
  double base = 1;
  auto strip = [&unit](const std::string& suffix) {
    const bool ends = unit.size() >= suffix.size() && unit.compare(unit.size() - suffix.size(), suffix.size(), suffix) == 0;
    if (ends) unit.resize(unit.size() - suffix.size());
    return ends;
  };
  if (quantity == Quantity::speed ? !strip("f") : !(strip("Bps") || (strip("bps") && (base = 1 / 8.0) > 0)))
    return unit.empty() ? 1 : 0;
  static const std::map<std::string, double> prefixes{
      {"", 1},       {"k", 1e3},      {"K", 1e3},      {"M", 1e6},      {"G", 1e9},      {"T", 1e12},
      {"P", 1e15},   {"E", 1e18},     {"Z", 1e21},     {"Y", 1e24},     {"Ki", 0x1p10},  {"Mi", 0x1p20},
      {"Gi", 0x1p30}, {"Ti", 0x1p40}, {"Pi", 0x1p50}, {"Ei", 0x1p60}, {"Zi", 0x1p70}, {"Yi", 0x1p80}};
  const auto it = prefixes.find(unit);
  return it == prefixes.end() ? 0 : base * it->second;
}

// The largest value collsim accepts (README "Limits"): SimGrid overflows beyond (a
// 1e308GBps link stops it with "The Impossible Did Happen"; a 1e308Gf host is infinite).
double largest(Quantity quantity) {
  return quantity == Quantity::bandwidth ? bandwidth_range.largest
         : quantity == Quantity::speed   ? flops_range.largest
                                         : time_range.largest;
}

void check_quantities(const Tag& tag, const std::string& where) {
  static const std::map<std::string, Quantity> quantities{
      {"bandwidth", Quantity::bandwidth}, {"bw", Quantity::bandwidth},      {"bb_bw", Quantity::bandwidth},
      {"loopback_bw", Quantity::bandwidth}, {"limiter_link", Quantity::bandwidth}, {"speed", Quantity::speed},
      {"latency", Quantity::latency},     {"lat", Quantity::latency},       {"bb_lat", Quantity::latency},
      {"loopback_lat", Quantity::latency}};
  for (const auto& [key, value] : tag.attributes) {
    const auto found = quantities.find(key);
    if (found == quantities.end()) continue;
    const Quantity quantity = found->second;
    const bool positive = quantity != Quantity::latency;  // latencies may be 0
    size_t start = 0;  // speeds may list one value per pstate: "1Gf,500Mf"
    while (start <= value.size()) {
      const size_t comma = std::min(value.find(',', start), value.size());
      const std::string item = value.substr(start, comma - start);
      bool ok = false;
      std::string unit;
      const double number = leading_number(item, ok, unit);
      const bool fits = ok && std::isfinite(number) && (positive ? number > 0 && std::isnormal(number) : number >= 0);
      if (!fits)
        throw InputError(fmt::format("{}: <{}> {}=\"{}\" must be a {} number with a unit", where, tag.name, key,
                                     value, positive ? "finite, positive" : "finite, non-negative"));
      const double scale = unit_scale(quantity, unit);
      if (number * scale > largest(quantity))
        throw InputError(fmt::format("{}: <{}> {}=\"{}\" is too large; at most {:g} {}", where, tag.name, key, value,
                                     largest(quantity), quantity == Quantity::bandwidth ? "B/s (1 PB/s)"
                                                        : quantity == Quantity::speed ? "flop/s (1 Ef)" : "s"));
      start = comma + 1;
    }
  }
}

// What SimGrid reads from a tag beyond its quantities: a <config> prop is an engine option
// and goes through the allow-list --cfg does (a platform's tracing/filename could replace
// the scenario; debug/breakpoint traps); WIFI links need a wifi zone's set-up and crash
// SimGrid elsewhere.
void check_settings(const Tag& tag, const std::string& where, bool in_config) {
  if (in_config && tag.name == "prop") {
    const auto id = tag.attributes.find("id");
    const auto value = tag.attributes.find("value");
    check_simgrid_option(fmt::format("{}:{}", id == tag.attributes.end() ? "" : id->second,
                                     value == tag.attributes.end() ? "" : value->second),
                         where + ": <config> <prop>");
  }
  static const std::vector<std::string> policies{"SHARED", "SPLITDUPLEX", "FATPIPE"};
  for (const char* key : {"sharing_policy", "bb_sharing_policy"}) {
    const auto policy = tag.attributes.find(key);
    if (policy != tag.attributes.end() && std::find(policies.begin(), policies.end(), policy->second) == policies.end())
      throw InputError(fmt::format("{}: <{}> {}=\"{}\" is not supported; allowed: {}", where, tag.name, key,
                                   policy->second, join(policies)));
  }
}

struct ZoneFacts {
  std::string id, routing;
  int line = 0;
  long long hosts = 0, links = 0;
};

}  // namespace

PlatformFileFacts check_platform_file(const std::string& path) {
  const std::vector<Tag> tags = read_tags(read_input_file(path, "platform file"), path);
  PlatformFileFacts facts;
  std::vector<ZoneFacts> zones;  // the open zones, outermost first
  bool in_config = false;         // inside <config>: its <prop>s are engine options
  for (const Tag& tag : tags) {
    const std::string where = fmt::format("topology: '{}' line {}", path, tag.line);
    const bool zone = tag.name == "zone" || tag.name == "AS";
    if (tag.closing) {
      if (zone && !zones.empty()) {
        const ZoneFacts& done = zones.back();
        const bool routed = done.routing == "Full" || done.routing == "Floyd" || done.routing == "Dijkstra" ||
                            done.routing == "DijkstraCache";
        if (routed && done.hosts > 1 && done.links == 0)
          throw InputError(fmt::format("topology: '{}' line {}: zone '{}' (routing {}) has {} hosts and no link: "
                                       "its hosts cannot reach each other",
                                       path, done.line, done.id, done.routing, done.hosts));
        zones.pop_back();
      }
      if (tag.name == "config") in_config = false;
      continue;
    }
    check_quantities(tag, where);
    check_settings(tag, where, in_config);
    if (tag.name == "config") in_config = !tag.self_closing;
    if (zone && !tag.self_closing) {
      if (static_cast<int>(zones.size()) >= max_zone_depth)
        throw InputError(fmt::format("{}: zones nested deeper than {} levels", where, max_zone_depth));
      auto routing = tag.attributes.find("routing");
      auto id = tag.attributes.find("id");
      zones.push_back({id == tag.attributes.end() ? "" : id->second,
                       routing == tag.attributes.end() ? "" : routing->second, tag.line, 0, 0});
    }
    long long hosts = 0;
    if (tag.name == "host") {
      hosts = 1;
      // a rank placed on a host named "" could never be named back (faults, placement)
      const auto id = tag.attributes.find("id");
      if (id == tag.attributes.end() || id->second.empty())
        throw InputError(fmt::format("{}: <host> has an empty id; every host needs a name", where));
    }
    if (tag.name == "cluster" || tag.name == "cabinet") {
      const auto radical = tag.attributes.find("radical");
      if (radical != tag.attributes.end()) hosts = radical_count(radical->second, where);
    }
    facts.hosts += hosts;
    if (!zones.empty()) {
      if (tag.name == "host") ++zones.back().hosts;  // a cluster routes its own hosts
      if (tag.name == "link" || tag.name == "backbone") ++zones.back().links;
    }
  }
  if (facts.hosts == 0)
    throw InputError(fmt::format("topology: '{}' has no hosts (give <host> elements or a <cluster>)", path));
  return facts;
}

}  // namespace collsim
