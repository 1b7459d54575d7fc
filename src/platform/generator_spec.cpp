#include "platform/generator_spec.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <sstream>

#include "platform/gpu_catalogue.hpp"
#include "util/errors.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"

namespace collsim {

const std::vector<GeneratorFamily>& generator_families() {
  static const std::vector<GeneratorFamily> families{
      {"star", "star:P[:BW[:LAT]]", {"star:8"}, "P hosts, a private link each (default 10GBps, 1us) to one switch"},
      {"rack", "rack:P:SLOW:SLOW_BW[:BW[:LAT]]", {"rack:8:3:1.25GBps"}, "a star whose host SLOW has a SLOW_BW link"},
      {"fat-tree", "fat-tree:LEVELS:DOWN:UP:COUNT[:BW[:LAT]]", {"fat-tree:2:4,4:1,2:1,2"},
       "SimGrid's FAT_TREE; DOWN, UP, COUNT: one value per level"},
      {"torus", "torus:XxY[xZ][:BW[:LAT]]", {"torus:4x4", "torus:4x4x4"},
       "SimGrid's TORUS: a host per node, a link to the next in each dimension"},
      {"dragonfly", "dragonfly:G[,GL]:R[,RL]:N[:BW[:LAT]]", {"dragonfly:4:4:2"},
       "G <= R groups of R all-to-all routers, N hosts each"},
      {"nodes", "nodes:N:G[:INTRA_BW[:NIC_BW[:INTRA_LAT[:NIC_LAT]]]]", {"nodes:4:8"},
       "N nodes (a zone each) of G devices, one NIC per node (100GBps/0.5us, 12.5GBps/2us)"},
      {"rail", "rail:N:G[:NVLINK_BW[:NIC_BW[:NVLINK_LAT[:NIC_LAT[:OVERSUB]]]]]", {"rail:4:8"},
       "N nodes of G GPUs, a NIC per GPU on rail switch j, rails on a spine (450GBps/0.5us, 400Gbps/2us, 1)"},
      {"dgx-h100", "dgx-h100:N[:OVERSUB][:NIC]", {"dgx-h100:4"}, "N DGX H100 servers on rails: rail:N:8:h100:ndr"},
      {"dgx-h200", "dgx-h200:N[:OVERSUB][:NIC]", {"dgx-h200:4"}, "N DGX H200 servers on rails: rail:N:8:h200:ndr"},
      {"dgx-a100", "dgx-a100:N[:OVERSUB][:NIC]", {"dgx-a100:4"}, "N DGX A100 servers on rails: rail:N:8:a100:hdr"},
      {"gb200-nvl72", "gb200-nvl72:R[:OVERSUB][:NIC]", {"gb200-nvl72:2"},
       "R GB200 NVL72 racks: 72 B200 in one NVLink domain, a 400 Gb/s NIC each, on rails"},
      {"leaf-spine", "leaf-spine:L:H[:BW[:LAT[:OVERSUB]]]", {"leaf-spine:4:8"},
       "L leaves (a zone each) of H one-NIC hosts (10GBps/1us), uplinks H x BW / OVERSUB to a spine"},
  };
  return families;
}

namespace {

constexpr long long max_hosts = 1'000'000;
// SimGrid Link objects, as `collsim list topologies` counts them (both halves of each
// split-duplex link, and the loopback): star:1000000 has 2000001.
constexpr long long max_links = 4'000'000;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.emplace_back();
  return parts;
}

// Reads the ':'-separated parameters of one generator string; every complaint names the
// field and ends with the family's syntax and an example.
class Parser {
public:
  Parser(const std::string& topology, const std::string& field, const GeneratorFamily& family)
      : topology_(topology), field_(field), family_(family), parts_(split(topology, ':')) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw InputError(fmt::format("{}: '{}': {}; syntax {}, e.g. {}", field_, topology_, problem, family_.syntax,
                                 family_.examples.front()));
  }

  // The family name is parts_[0]; `required` to `required + optional` parameters follow.
  void expect_parameters(size_t required, size_t optional) const {
    const size_t given = parts_.size() - 1;
    if (given < required || given > required + optional)
      fail(fmt::format("{} parameter{} given, {} takes {} to {}", given, given == 1 ? "" : "s", family_.name, required,
                       required + optional));
  }

  bool has(size_t index) const { return index < parts_.size(); }
  const std::string& part(size_t index) const { return parts_[index]; }

  long long integer(const std::string& text, const std::string& name, long long low, long long high) const {
    long long value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < low || value > high)
      fail(fmt::format("{} '{}' must be an integer from {} to {}", name, text, low, high));
    return value;
  }

  std::vector<long long> integers(const std::string& text, char separator, const std::string& name, long long low,
                                  long long high) const {
    std::vector<long long> values;
    for (const std::string& item : split(text, separator)) values.push_back(integer(item, name, low, high));
    if (values.empty()) fail(fmt::format("{} is empty", name));
    return values;
  }

  // A bandwidth or a time, as parse_bandwidth or parse_time reads it; their errors keep
  // collsim's wording, with the parameter's name in place of the field.
  double quantity(size_t index, const std::string& name, double fallback,
                  double (*parse)(std::string_view, std::string_view)) const {
    if (!has(index)) return fallback;
    try {
      return parse(parts_[index], name);
    } catch (const InputError& error) {
      fail(error.what());
    }
  }
  double bandwidth(size_t index, const std::string& name, double fallback) const {
    return quantity(index, name, fallback, parse_bandwidth);
  }
  double time(size_t index, const std::string& name, double fallback) const {
    return quantity(index, name, fallback, parse_time);
  }

  // An oversubscription ratio: a number from 1 (non-blocking) to 1000.
  double ratio(size_t index, const std::string& name) const {
    if (!has(index)) return 1;
    const std::string& text = parts_[index];
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || !(value >= 1 && value <= 1000))
      fail(fmt::format("{} '{}' must be a number from 1 (non-blocking) to 1000", name, text));
    return value;
  }

  // A parameter that is a quantity or a name of `names`: a word that is neither is refused
  // with the names (a number is left to the quantity's own parser).
  void expect_quantity_or_name(size_t index, const std::string& name, const std::string& what,
                               const std::vector<std::string>& names) const {
    if (!has(index) || parts_[index].empty() || !std::isalpha(static_cast<unsigned char>(parts_[index].front()))) return;
    fail(fmt::format("{} '{}' is no bandwidth and no {}{}; {}s: {}", name, parts_[index], what,
                     did_you_mean(parts_[index], names), what, join(names)));
  }

  LinkSpec link(size_t first, LinkSpec fallback) const {
    return {bandwidth(first, "BW", fallback.bandwidth), time(first + 1, "LAT", fallback.latency)};
  }

  void check_size(long long hosts, long long links) const {
    if (hosts > max_hosts) fail(fmt::format("{} hosts is too many; at most {}", hosts, max_hosts));
    if (links > max_links) fail(fmt::format("{} links is too many; at most {}", links, max_links));
  }

private:
  const std::string& topology_;
  const std::string& field_;
  const GeneratorFamily& family_;
  std::vector<std::string> parts_;
};

StarSpec parse_star(const Parser& in) {
  in.expect_parameters(1, 2);
  StarSpec star;
  star.hosts = static_cast<int>(in.integer(in.part(1), "P", 1, max_hosts));
  star.link = in.link(2, star.link);
  return star;
}

RackSpec parse_rack(const Parser& in) {
  in.expect_parameters(3, 2);
  RackSpec rack;
  rack.hosts = static_cast<int>(in.integer(in.part(1), "P", 1, max_hosts));
  rack.slow_host = static_cast<int>(in.integer(in.part(2), "SLOW", 0, rack.hosts - 1));
  rack.slow_bandwidth = in.bandwidth(3, "SLOW_BW", 0);
  rack.link = in.link(4, rack.link);
  return rack;
}

FatTreeSpec parse_fat_tree(const Parser& in) {
  in.expect_parameters(4, 2);
  FatTreeSpec tree;
  tree.levels = static_cast<unsigned>(in.integer(in.part(1), "LEVELS", 1, 16));
  auto per_level = [&](size_t index, const char* name) {
    std::vector<unsigned> values;
    for (long long value : in.integers(in.part(index), ',', name, 1, max_hosts))
      values.push_back(static_cast<unsigned>(value));
    if (values.size() != tree.levels)
      in.fail(fmt::format("{} '{}' has {} value{}, LEVELS says {}", name, in.part(index), values.size(),
                          values.size() == 1 ? "" : "s", tree.levels));
    return values;
  };
  tree.down = per_level(2, "DOWN");
  tree.up = per_level(3, "UP");
  tree.count = per_level(4, "COUNT");
  tree.link = in.link(5, tree.link);
  // Level 0 holds the hosts (the product of DOWN); level l+1 holds UP[0..l] x DOWN[l+1..]
  // switches; each element of level l has UP[l] parents, COUNT[l] cables to each.
  double hosts = 1, cables = 0;
  for (unsigned d : tree.down) hosts *= d;
  double elements = hosts;
  for (unsigned l = 0; l < tree.levels; ++l) {
    cables += elements * tree.up[l] * tree.count[l];
    elements = elements / tree.down[l] * tree.up[l];
  }
  in.check_size(static_cast<long long>(std::min(hosts, 1e18)), static_cast<long long>(std::min(2 * cables + 1, 1e18)));
  return tree;
}

TorusSpec parse_torus(const Parser& in) {
  in.expect_parameters(1, 2);
  TorusSpec torus;
  double hosts = 1;
  for (long long d : in.integers(in.part(1), 'x', "dimension", 1, max_hosts)) {
    torus.dimensions.push_back(static_cast<unsigned long>(d));
    hosts *= static_cast<double>(d);
  }
  const double links = 2.0 * hosts * static_cast<double>(torus.dimensions.size()) + 1;
  in.check_size(static_cast<long long>(std::min(hosts, 1e18)), static_cast<long long>(std::min(links, 1e18)));
  torus.link = in.link(2, torus.link);
  return torus;
}

DragonflySpec parse_dragonfly(const Parser& in) {
  in.expect_parameters(3, 2);
  DragonflySpec fly;
  auto count_and_links = [&](size_t index, const char* count_name, const char* links_name, long long high) {
    const std::vector<std::string> items = split(in.part(index), ',');
    if (items.empty() || items.size() > 2)
      in.fail(fmt::format("'{}' must be {} or {},{}", in.part(index), count_name, count_name, links_name));
    const auto count = static_cast<unsigned>(in.integer(items[0], count_name, 1, high));
    const auto links = items.size() == 2 ? static_cast<unsigned>(in.integer(items[1], links_name, 1, 1000)) : 1u;
    return std::pair{count, links};
  };
  std::tie(fly.groups, fly.global_links) = count_and_links(1, "G", "GL", 128);
  std::tie(fly.routers, fly.local_links) = count_and_links(2, "R", "RL", 128);
  fly.nodes = static_cast<unsigned>(in.integer(in.part(3), "N", 1, max_hosts));
  // SimGrid attaches the link towards group j to router j of every group, so a group
  // needs at least G routers; with fewer, SimGrid 3.32 crashes while routing.
  if (fly.groups > fly.routers)
    in.fail(fmt::format("G = {} groups need R >= G routers per group (router j of each group links to group j)",
                        fly.groups));
  fly.link = in.link(4, fly.link);
  const double g = fly.groups, r = fly.routers, hosts = g * r * fly.nodes;
  const double cables = hosts + g * r * (r - 1) / 2 + g * (g - 1) / 2;
  in.check_size(static_cast<long long>(hosts), static_cast<long long>(2 * cables + 1));
  return fly;
}

NodesSpec parse_nodes(const Parser& in) {
  in.expect_parameters(2, 4);
  NodesSpec nodes;
  nodes.nodes = static_cast<int>(in.integer(in.part(1), "N", 1, max_hosts));
  nodes.devices = static_cast<int>(in.integer(in.part(2), "G", 1, max_hosts));
  const long long hosts = static_cast<long long>(nodes.nodes) * nodes.devices;
  in.check_size(hosts, 2 * (hosts + nodes.nodes) + 1);
  nodes.intra.bandwidth = in.bandwidth(3, "INTRA_BW", nodes.intra.bandwidth);
  nodes.nic.bandwidth = in.bandwidth(4, "NIC_BW", nodes.nic.bandwidth);
  nodes.intra.latency = in.time(5, "INTRA_LAT", nodes.intra.latency);
  nodes.nic.latency = in.time(6, "NIC_LAT", nodes.nic.latency);
  return nodes;
}

void use_nic(RailSpec& rail, const NicModel& nic) {
  rail.nic_model = nic.name;
  rail.nic.bandwidth = nic.line_rate;
}

RailSpec parse_rail(const Parser& in) {
  in.expect_parameters(2, 5);
  RailSpec rail;
  rail.nodes = static_cast<int>(in.integer(in.part(1), "N", 1, max_hosts));
  rail.gpus = static_cast<int>(in.integer(in.part(2), "G", 1, max_hosts));
  const long long hosts = static_cast<long long>(rail.nodes) * rail.gpus;
  // an NVLink port and a NIC per GPU, an uplink per rail
  in.check_size(hosts, 2 * (2 * hosts + rail.gpus) + 1);
  if (const GpuModel* gpu = in.has(3) ? find_gpu_model(in.part(3)) : nullptr) {
    rail.gpu = gpu->name;
    rail.nvlink.bandwidth = gpu->nvlink_bandwidth();
  } else {
    in.expect_quantity_or_name(3, "NVLINK_BW", "GPU", gpu_model_names());
    rail.nvlink.bandwidth = in.bandwidth(3, "NVLINK_BW", rail.nvlink.bandwidth);
  }
  if (const NicModel* nic = in.has(4) ? find_nic_model(in.part(4)) : nullptr) {
    use_nic(rail, *nic);
  } else {
    in.expect_quantity_or_name(4, "NIC_BW", "NIC", nic_model_names());
    rail.nic.bandwidth = in.bandwidth(4, "NIC_BW", rail.nic.bandwidth);
  }
  rail.nvlink.latency = in.time(5, "NVLINK_LAT", rail.nvlink.latency);
  rail.nic.latency = in.time(6, "NIC_LAT", rail.nic.latency);
  rail.oversubscription = in.ratio(7, "OVERSUB");
  return rail;
}

// A preset node (gpu_catalogue.hpp): NAME:N[:OVERSUB][:NIC], the two options in any order.
RailSpec parse_node_preset(const Parser& in, const NodeModel& node) {
  in.expect_parameters(1, 2);
  RailSpec rail;
  rail.gpus = node.gpus;
  rail.nodes = static_cast<int>(in.integer(in.part(1), "N", 1, max_hosts / node.gpus));
  const GpuModel& gpu = *find_gpu_model(node.gpu);
  rail.gpu = gpu.name;
  rail.nvlink.bandwidth = gpu.nvlink_bandwidth();
  rail.cpu = std::string(cpu_vendor_name(node.cpu));
  use_nic(rail, *find_nic_model(node.nic));
  bool nic_given = false, oversub_given = false;
  for (size_t i = 2; i <= 3 && in.has(i); ++i) {
    const bool number = !in.part(i).empty() && std::isdigit(static_cast<unsigned char>(in.part(i).front()));
    if (number ? oversub_given : nic_given) in.fail(fmt::format("{} is given twice", number ? "OVERSUB" : "NIC"));
    if (number) {
      rail.oversubscription = in.ratio(i, "OVERSUB");
      oversub_given = true;
    } else if (const NicModel* nic = find_nic_model(in.part(i))) {
      use_nic(rail, *nic);
      nic_given = true;
    } else {
      in.fail(fmt::format("'{}' is no NIC{}; allowed: {} (or an OVERSUB number)", in.part(i),
                          did_you_mean(in.part(i), nic_model_names()), join(nic_model_names())));
    }
  }
  return rail;
}

LeafSpineSpec parse_leaf_spine(const Parser& in) {
  in.expect_parameters(2, 3);
  LeafSpineSpec spine;
  spine.leaves = static_cast<int>(in.integer(in.part(1), "L", 1, max_hosts));
  spine.hosts = static_cast<int>(in.integer(in.part(2), "H", 1, max_hosts));
  const long long hosts = static_cast<long long>(spine.leaves) * spine.hosts;
  in.check_size(hosts, 2 * (hosts + spine.leaves) + 1);
  spine.link = in.link(3, spine.link);
  spine.oversubscription = in.ratio(5, "OVERSUB");
  return spine;
}

// "tours:4x4" looks like a generator, "topologies/x.xml" like a file.
bool looks_like_a_generator(const std::string& topology, const std::string& name) {
  const bool bare_word = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
  return bare_word && topology.find('/') == std::string::npos && !topology.ends_with(".xml");
}

}  // namespace

std::optional<GeneratorSpec> parse_generator(const std::string& topology, const std::string& field) {
  const std::string name = topology.substr(0, topology.find(':'));
  const auto& families = generator_families();
  const auto family = std::find_if(families.begin(), families.end(), [&](const auto& f) { return f.name == name; });
  if (family == families.end()) {
    if (topology.find(':') == std::string::npos || !looks_like_a_generator(topology, name)) return std::nullopt;
    std::vector<std::string> names;
    for (const auto& f : families) names.push_back(f.name);
    throw InputError(fmt::format("{}: unknown generator '{}' in '{}'{}; allowed: {} (or a platform file; `collsim list "
                                 "topologies`)",
                                 field, name, topology, did_you_mean(name, names), join(names)));
  }
  const Parser in(topology, field, *family);
  if (name == "star") return parse_star(in);
  if (name == "rack") return parse_rack(in);
  if (name == "fat-tree") return parse_fat_tree(in);
  if (name == "torus") return parse_torus(in);
  if (name == "dragonfly") return parse_dragonfly(in);
  if (name == "rail") return parse_rail(in);
  if (const NodeModel* node = find_node_model(name)) return parse_node_preset(in, *node);
  if (name == "leaf-spine") return parse_leaf_spine(in);
  return parse_nodes(in);
}

}  // namespace collsim
