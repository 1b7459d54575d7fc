#include "model/generated_network.hpp"

#include <fmt/format.h>
#include <stdexcept>

#include "model/fat_tree_structure.hpp"
#include "platform/gpu_catalogue.hpp"

namespace collsim {
namespace {

// A split-duplex link's half: index 2k is link k's UP half, 2k + 1 its DOWN half.
NetworkLink half_of(const std::string& name, const LinkSpec& spec, int index, bool switch_link = false) {
  return {name + (index % 2 == 0 ? "_UP" : "_DOWN"), spec.bandwidth, true, spec.latency, switch_link};
}

void add(std::vector<int>& links, double& latency, int index, const LinkSpec& spec) {
  links.push_back(index);
  latency += spec.latency;
}

// star and rack (platform/generators.cpp, build_star): host i's link host-i_link (link i);
// a route is the sender's UP half, then the receiver's DOWN half.
class StarStructure final : public GeneratedStructure {
public:
  StarStructure(std::string zone, int hosts, LinkSpec link, int slow_host = -1, double slow_bandwidth = 0)
      : zone_(std::move(zone)), hosts_(hosts), link_(link), slow_host_(slow_host) {
    slow_ = link;
    slow_.bandwidth = slow_bandwidth;
  }
  void route(int from, int to, std::vector<int>& links, double& latency) const override {
    add(links, latency, 2 * from, spec(from));
    add(links, latency, 2 * to + 1, spec(to));
  }
  NetworkLink link(int index) const override {
    return half_of(fmt::format("host-{}_link", index / 2), spec(index / 2), index);
  }
  size_t hosts() const override { return static_cast<size_t>(hosts_); }
  size_t links() const override { return 2 * static_cast<size_t>(hosts_); }
  std::string zone(int) const override { return zone_; }

private:
  const LinkSpec& spec(int host) const { return host == slow_host_ ? slow_ : link_; }
  std::string zone_;
  int hosts_;
  LinkSpec link_, slow_;
  int slow_host_;
};

// nodes and leaf-spine (build_star_of_stars): groups of members, member j of group g is
// host g * M + j with its link (link g * M + j); group g's uplink is link G * M + g. Inside
// a group: the sender's UP, the receiver's DOWN. Between groups SimGrid reads the top
// zone's route first (the two uplinks), then each group's (its host's link): the latency
// adds up in that order, the links go sender to receiver.
class StarOfStarsStructure final : public GeneratedStructure {
public:
  struct Names {
    const char* group;   // "node"
    const char* member;  // "dev"
    const char* uplink;  // "nic"
  };
  StarOfStarsStructure(Names names, int groups, int members, LinkSpec member_link, LinkSpec group_link, bool switch_uplink)
      : names_(names), groups_(groups), members_(members), member_(member_link), group_(group_link),
        switch_uplink_(switch_uplink) {}

  void route(int from, int to, std::vector<int>& links, double& latency) const override {
    const int gf = from / members_, gt = to / members_;
    if (gf == gt) {
      add(links, latency, 2 * from, member_);
      add(links, latency, 2 * to + 1, member_);
      return;
    }
    latency += group_.latency;
    latency += group_.latency;
    latency += member_.latency;
    latency += member_.latency;
    links.insert(links.end(), {2 * from, uplink_half(gf, true), uplink_half(gt, false), 2 * to + 1});
  }
  NetworkLink link(int index) const override {
    const int k = index / 2, hosts = groups_ * members_;
    if (k < hosts)
      return half_of(fmt::format("{}-{}-{}-{}_link", names_.group, k / members_, names_.member, k % members_), member_, index);
    return half_of(fmt::format("{}-{}-{}", names_.group, k - hosts, names_.uplink), group_, index, switch_uplink_);
  }
  size_t hosts() const override { return static_cast<size_t>(groups_) * static_cast<size_t>(members_); }
  size_t links() const override { return 2 * (hosts() + static_cast<size_t>(groups_)); }
  std::string zone(int host) const override { return fmt::format("{}-{}", names_.group, host / members_); }

private:
  int uplink_half(int group, bool up) const { return 2 * (groups_ * members_ + group) + (up ? 0 : 1); }
  Names names_;
  int groups_, members_;
  LinkSpec member_, group_;
  bool switch_uplink_;
};

// rail (build_rail, platform/rail_zone.cpp): GPU i's NVLink port is link 2i, its NIC link
// 2i + 1; rail j's uplink is link 2 N G + j. After the GPUs, the switches that reduce
// (add_reducing_switches): each node's NVSwitch (NVLink SHARP GPUs), then each rail's
// switch (SHARP NICs), reached through a GPU's NVLink port and NIC respectively.
class RailStructure final : public GeneratedStructure {
public:
  explicit RailStructure(const RailSpec& spec)
      : spec_(spec), uplink_(spec.uplink()), node_switches_(find_gpu_model(spec.gpu)->nvlink_sharp),
        rail_switches_(find_nic_model(spec.nic_model)->sharp) {}

  void route(int from, int to, std::vector<int>& links, double& latency) const override {
    const int gpus = static_cast<int>(hosts());
    if (from >= gpus || to >= gpus) return switch_route(from, to, links, latency);
    const int g = spec_.gpus, from_rail = from % g, to_rail = to % g;
    if (from / g == to / g) {
      add(links, latency, half(2 * from, true), spec_.nvlink);
      add(links, latency, half(2 * to, false), spec_.nvlink);
      return;
    }
    if (from_rail != to_rail && spec_.pxn) {
      // PXN: over NVLink to the node-mate on the receiver's rail, out through its NIC
      const int relay = from - from_rail + to_rail;
      add(links, latency, half(2 * from, true), spec_.nvlink);
      add(links, latency, half(2 * relay, false), spec_.nvlink);
      add(links, latency, half(2 * relay + 1, true), spec_.nic);
      add(links, latency, half(2 * to + 1, false), spec_.nic);
      return;
    }
    add(links, latency, half(2 * from + 1, true), spec_.nic);
    if (from_rail != to_rail) {
      add(links, latency, half(uplink(from_rail), true), uplink_);
      add(links, latency, half(uplink(to_rail), false), uplink_);
    }
    add(links, latency, half(2 * to + 1, false), spec_.nic);
  }
  NetworkLink link(int index) const override {
    const int k = index / 2, gpus = spec_.nodes * spec_.gpus;
    if (k >= 2 * gpus) return half_of(fmt::format("rail-{}_uplink", k - 2 * gpus), uplink_, index, true);
    const int gpu = k / 2;
    const std::string name = fmt::format("node-{}-gpu-{}", gpu / spec_.gpus, gpu % spec_.gpus);
    return k % 2 == 0 ? half_of(name + "_nvlink", spec_.nvlink, index) : half_of(name + "_nic", spec_.nic, index);
  }
  size_t hosts() const override { return static_cast<size_t>(spec_.nodes) * static_cast<size_t>(spec_.gpus); }
  size_t links() const override { return 2 * (2 * hosts() + static_cast<size_t>(spec_.gpus)); }
  std::string zone(int) const override { return "rail"; }
  std::string node(int host) const override { return fmt::format("node-{}", host / spec_.gpus); }
  size_t switches() const override {
    return (node_switches_ ? static_cast<size_t>(spec_.nodes) : 0) + (rail_switches_ ? static_cast<size_t>(spec_.gpus) : 0);
  }
  std::string name(int host) const override {
    const auto [kind, index] = switch_of(host);
    if (kind == Kind::gpu) return fmt::format("node-{}-gpu-{}", index / spec_.gpus, index % spec_.gpus);
    return kind == Kind::node_switch ? fmt::format("node-{}-nvswitch", index) : fmt::format("rail-{}-switch", index);
  }
  HostProperties properties(int host) const override {
    const auto [kind, index] = switch_of(host);
    if (kind == Kind::node_switch) return {{"role", "nvswitch"}, {"node", fmt::format("node-{}", index)}};
    if (kind == Kind::rail_switch) return {{"role", "sharp-switch"}, {"rail", std::to_string(index)}};
    return {{"node", node(host)}, {"rail", std::to_string(host % spec_.gpus)}, {"gpu", spec_.gpu},
            {"nic", spec_.nic_model}, {"cpu", spec_.cpu}};
  }

private:
  enum class Kind { gpu, node_switch, rail_switch };
  // What host `host` is: a GPU (its index), a node's switch (its node) or a rail's (its rail).
  std::pair<Kind, int> switch_of(int host) const {
    const int gpus = static_cast<int>(hosts());
    if (host < gpus) return {Kind::gpu, host};
    const int nodes = node_switches_ ? spec_.nodes : 0;
    return host - gpus < nodes ? std::pair{Kind::node_switch, host - gpus} : std::pair{Kind::rail_switch, host - gpus - nodes};
  }
  // A GPU and a reducing switch of its own node (its NVLink port) or rail (its NIC), as
  // RailZone::switch_route; switches do not talk to each other.
  void switch_route(int from, int to, std::vector<int>& links, double& latency) const {
    const bool up = from < static_cast<int>(hosts());
    const int gpu = up ? from : to;
    const auto [kind, index] = switch_of(up ? to : from);
    const bool own = kind == Kind::node_switch ? index == gpu / spec_.gpus
                                               : kind == Kind::rail_switch && index == gpu % spec_.gpus;
    if (!own) throw std::logic_error("RailStructure: a GPU only reaches its own node's and its own rail's switch");
    if (kind == Kind::node_switch) add(links, latency, half(2 * gpu, up), spec_.nvlink);
    else add(links, latency, half(2 * gpu + 1, up), spec_.nic);
  }
  static int half(int link, bool up) { return 2 * link + (up ? 0 : 1); }
  int uplink(int rail) const { return 2 * spec_.nodes * spec_.gpus + rail; }
  RailSpec spec_;
  LinkSpec uplink_;
  bool node_switches_, rail_switches_;
};

struct StructureOf {
  std::string& why_not;
  std::shared_ptr<const GeneratedStructure> operator()(const StarSpec& star) const {
    return std::make_shared<StarStructure>("star", star.hosts, star.link);
  }
  std::shared_ptr<const GeneratedStructure> operator()(const RackSpec& rack) const {
    return std::make_shared<StarStructure>("rack", rack.hosts, rack.link, rack.slow_host, rack.slow_bandwidth);
  }
  std::shared_ptr<const GeneratedStructure> operator()(const NodesSpec& nodes) const {
    return std::make_shared<StarOfStarsStructure>(StarOfStarsStructure::Names{"node", "dev", "nic"}, nodes.nodes,
                                                  nodes.devices, nodes.intra, nodes.nic, false);
  }
  std::shared_ptr<const GeneratedStructure> operator()(const LeafSpineSpec& spine) const {
    return std::make_shared<StarOfStarsStructure>(StarOfStarsStructure::Names{"leaf", "host", "uplink"}, spine.leaves,
                                                  spine.hosts, spine.link, spine.uplink(), true);
  }
  std::shared_ptr<const GeneratedStructure> operator()(const RailSpec& rail) const {
    return std::make_shared<RailStructure>(rail);
  }
  std::shared_ptr<const GeneratedStructure> operator()(const FatTreeSpec& tree) const {
    return fat_tree_structure(tree);
  }
  std::shared_ptr<const GeneratedStructure> operator()(const TorusSpec&) const {
    why_not = "a torus (SimGrid's own torus routing)";
    return nullptr;
  }
  std::shared_ptr<const GeneratedStructure> operator()(const DragonflySpec&) const {
    why_not = "a dragonfly (SimGrid's own dragonfly routing)";
    return nullptr;
  }
};

// Where the ranks (the first `workers` hosts) sit: in platform order, their zones and nodes.
RankPlaces places_of(const GeneratedStructure& structure, int workers) {
  RankPlaces places;
  std::string last_zone;
  for (int r = 0; r < workers; ++r) {
    places.position.push_back(static_cast<size_t>(r));
    std::string zone = structure.zone(r);
    if (places.zone_names.empty() || zone != last_zone) {
      places.zone_names.push_back(zone);
      last_zone = std::move(zone);
    }
    places.zone.push_back(static_cast<int>(places.zone_names.size()) - 1);
  }
  if (!structure.node(0).empty())
    for (int r = 0; r < workers; ++r) places.node.push_back(structure.node(r));
  return places;
}

}  // namespace

void GeneratedNetwork::read(int from, int to, double& latency) const {
  buffer_.clear();
  structure_->route(host_of(from), host_of(to), buffer_, latency);
  if (zero_latency_) latency = 0;
}

const NetworkRoute& GeneratedNetwork::route(int from, int to) const {
  const uint64_t key = static_cast<uint64_t>(static_cast<uint32_t>(from)) << 32 | static_cast<uint32_t>(to);
  auto [it, added] = routes_.try_emplace(key);
  if (added && from != to) {
    read(from, to, it->second.latency);
    it->second.links.reserve(buffer_.size());
    for (int index : buffer_) it->second.links.push_back(id_of(index));
  }
  return it->second;
}

// Computed again rather than looked up: as cheap as a lookup, and nothing kept.
void GeneratedNetwork::read_links(int from, int to, std::vector<int>& links) const {
  links.clear();
  if (from == to) return;
  double latency = 0;
  read(from, to, latency);
  for (int index : buffer_) links.push_back(id_of(index));
}

// Computed, not kept: the latency and links as route() would keep them.
double GeneratedNetwork::append_route(int from, int to, std::vector<int>& links) const {
  if (from == to) return 0;
  double latency = 0;
  read(from, to, latency);
  for (int index : buffer_) links.push_back(id_of(index));
  return latency;
}

int GeneratedNetwork::id_of(int index) const {
  int& id = ids_[static_cast<size_t>(index)];
  if (id < 0) {
    id = static_cast<int>(links_.size());
    links_.push_back(structure_->link(index));
    if (zero_latency_) links_.back().latency = 0;
  }
  return id;
}

std::shared_ptr<const Network> GeneratedPlatform::with_switches(std::vector<int> switch_hosts) const {
  return std::make_shared<const GeneratedNetwork>(structure, zero_latency, static_cast<int>(places.ranks()),
                                                  std::move(switch_hosts));
}

std::optional<GeneratedPlatform> generated_platform(const GeneratorSpec& spec, int workers, std::string& why_not,
                                                    StructureOptions options) {
  GeneratorSpec built = spec;
  if (auto* rail = std::get_if<RailSpec>(&built)) rail->pxn = options.pxn;
  const auto structure = std::visit(StructureOf{why_not}, built);
  if (!structure) return std::nullopt;
  GeneratedPlatform platform;
  platform.hosts = structure->hosts();
  platform.places = places_of(*structure, workers);
  platform.structure = structure;
  platform.zero_latency = options.zero_latency;
  platform.network = std::make_shared<const GeneratedNetwork>(structure, options.zero_latency);
  return platform;
}

}  // namespace collsim
