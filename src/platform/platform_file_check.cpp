#include "platform/platform_file_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <map>
#include <vector>

#include "util/errors.hpp"
#include "util/input_file.hpp"

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
double leading_number(const std::string& text, bool& ok) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  ok = end != text.c_str();
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
    const long long first = std::strtoll(item.c_str(), &end, 10);
    long long last = first;
    if (dash != std::string::npos) last = std::strtoll(item.c_str() + dash + 1, &end, 10);
    if (item.empty() || *end != '\0' || first < 0 || last < first)
      throw InputError(fmt::format("{}: radical '{}' is not a list of ranges such as 0-15", where, radical));
    count += last - first + 1;
    if (count > (1LL << 40)) break;
    start = comma + 1;
  }
  return count;
}

void check_quantities(const Tag& tag, const std::string& where) {
  // attribute -> must it be > 0 (bandwidths, speeds) or only >= 0 (latencies)
  static const std::map<std::string, bool> positive{
      {"bandwidth", true}, {"bw", true},      {"bb_bw", true},       {"loopback_bw", true}, {"limiter_link", true},
      {"speed", true},     {"latency", false}, {"lat", false},       {"bb_lat", false},     {"loopback_lat", false}};
  for (const auto& [key, value] : tag.attributes) {
    const auto rule = positive.find(key);
    if (rule == positive.end()) continue;
    size_t start = 0;  // speeds may list one value per pstate: "1Gf,500Mf"
    while (start <= value.size()) {
      const size_t comma = std::min(value.find(',', start), value.size());
      const std::string item = value.substr(start, comma - start);
      bool ok = false;
      const double number = leading_number(item, ok);
      const bool fits = ok && std::isfinite(number) && (rule->second ? number > 0 && std::isnormal(number) : number >= 0);
      if (!fits)
        throw InputError(fmt::format("{}: <{}> {}=\"{}\" must be a {} number with a unit", where, tag.name, key,
                                     value, rule->second ? "finite, positive" : "finite, non-negative"));
      start = comma + 1;
    }
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
      continue;
    }
    check_quantities(tag, where);
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
