#include "platform/generators.hpp"

#include <fmt/format.h>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "platform/gpu_catalogue.hpp"
#include "platform/rail_zone.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

constexpr double host_speed = 1e9;  // flop/s, as the hosts of topologies/*.xml
constexpr auto split_duplex = sg4::Link::SharingPolicy::SPLITDUPLEX;

// A host's route to itself: SimGrid's loopback link (`__loopback__`, a fatpipe of
// network/loopback-bw, default 10 GBps, and network/loopback-lat, default 0; `cfg` sets
// them), which the network model creates with the first zone. Without it a star's route from
// a host to itself would cross the host's own link up and down, so that a parameter server
// beside a worker (placement "shared") would take its worker's push through the link the
// other workers' pushes come in by, and a torus would have no route at all.
sg4::Link* loopback_link() { return sg4::Link::by_name("__loopback__"); }

void add_loopback(sg4::NetZone* zone, const sg4::Host* host) {
  zone->add_route(host->get_netpoint(), host->get_netpoint(), nullptr, nullptr,
                  {sg4::LinkInRoute(loopback_link())}, false);
}

void mark_switch_link(sg4::SplitDuplexLink* link) {
  link->get_link_up()->set_property(switch_link_property, "yes");
  link->get_link_down()->set_property(switch_link_property, "yes");
}

// One star zone: each host's private split-duplex link to the centre (the switch). A
// route crosses the sender's UP half and the receiver's DOWN half, so a host sends and
// receives at full speed at once. `slow` gives one host another bandwidth (rack).
std::vector<sg4::Host*> build_star(const std::string& zone_name, int count, const LinkSpec& link, int slow_host = -1,
                                   double slow_bandwidth = 0) {
  std::vector<sg4::Host*> hosts;
  auto* zone = sg4::create_star_zone(zone_name);
  for (int i = 0; i < count; ++i) {
    const std::string name = fmt::format("host-{}", i);
    sg4::Host* host = zone->create_host(name, host_speed);
    hosts.push_back(host);
    const double bandwidth = i == slow_host ? slow_bandwidth : link.bandwidth;
    sg4::Link* nic = zone->create_split_duplex_link(name + "_link", bandwidth)->set_latency(link.latency);
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{nic, sg4::LinkInRoute::Direction::UP}}, true);
    add_loopback(zone, host);
  }
  zone->seal();
  return hosts;
}

// SimGrid's cluster zones (torus, fat tree, dragonfly) ask for their leaves one by one, in
// leaf order: each leaf is a host named after its position, which is its rank. `create`
// makes the zone from these callbacks.
template <typename CreateZone>
std::vector<sg4::Host*> build_cluster(const CreateZone& create) {
  std::vector<sg4::Host*> hosts;
  sg4::ClusterCallbacks leaves([&hosts](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long) {
    sg4::Host* host = zone->create_host(fmt::format("host-{}", hosts.size()), host_speed);
    hosts.push_back(host);
    return std::make_pair(host->get_netpoint(), static_cast<simgrid::kernel::routing::NetPoint*>(nullptr));
  });
  leaves.loopback = [](sg4::NetZone*, const std::vector<unsigned long>&, unsigned long) { return loopback_link(); };
  create(leaves)->seal();
  return hosts;
}

std::vector<sg4::Host*> build_torus(const TorusSpec& torus) {
  return build_cluster([&](const sg4::ClusterCallbacks& leaves) {
    return sg4::create_torus_zone("torus", nullptr, torus.dimensions, leaves, torus.link.bandwidth, torus.link.latency,
                                  split_duplex);
  });
}

std::vector<sg4::Host*> build_fat_tree(const FatTreeSpec& tree) {
  const sg4::FatTreeParams params(tree.levels, tree.down, tree.up, tree.count);
  return build_cluster([&](const sg4::ClusterCallbacks& leaves) {
    return sg4::create_fatTree_zone("fat-tree", nullptr, params, leaves, tree.link.bandwidth, tree.link.latency,
                                    split_duplex);
  });
}

// One chassis per group: SimGrid 3.32 routes some messages between routers of a group
// through a link between chassis they never cross (docs/topologies.md), so collsim keeps
// to the classic dragonfly, whose groups are all-to-all connected routers.
std::vector<sg4::Host*> build_dragonfly(const DragonflySpec& fly) {
  const sg4::DragonflyParams params({fly.groups, fly.global_links}, {1, 1}, {fly.routers, fly.local_links}, fly.nodes);
  return build_cluster([&](const sg4::ClusterCallbacks& leaves) {
    return sg4::create_dragonfly_zone("dragonfly", nullptr, params, leaves, fly.link.bandwidth, fly.link.latency,
                                      split_duplex);
  });
}

// nodes-begin
// A star of stars: each group (a node, a leaf) is its own star zone (hierarchical
// algorithms group ranks by the host's englobing zone), whose hosts reach the group's
// gateway over private links; the group reaches the top-level switch over its one uplink
// (a node's NIC, a leaf's uplink to the spine). A route between groups: host UP, uplink
// UP, the other group's uplink DOWN, host DOWN.
struct StarOfStars {
  const char* top;     // "nodes": the top-level zone
  const char* group;   // "node": zones node-I, gateways node-I-gw
  const char* member;  // "dev": hosts node-I-dev-J, their links node-I-dev-J_link
  const char* uplink;  // "nic": uplinks node-I-nic
  int groups = 0, members = 0;
  LinkSpec member_link, group_link;
  bool uplink_is_switch_link = false;  // a leaf's uplink, not a node's NIC (switch_link_property)
};

std::vector<sg4::Host*> build_star_of_stars(const StarOfStars& spec) {
  std::vector<sg4::Host*> hosts;
  auto* top = sg4::create_star_zone(spec.top);
  for (int i = 0; i < spec.groups; ++i) {
    auto* group = sg4::create_star_zone(fmt::format("{}-{}", spec.group, i));
    group->set_parent(top);
    for (int j = 0; j < spec.members; ++j) {
      const std::string name = fmt::format("{}-{}-{}-{}", spec.group, i, spec.member, j);
      sg4::Host* host = group->create_host(name, host_speed);
      hosts.push_back(host);
      sg4::Link* link = group->create_split_duplex_link(name + "_link", spec.member_link.bandwidth);
      link->set_latency(spec.member_link.latency);
      group->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}});
      add_loopback(group, host);
    }
    // The gateway is the group's switch itself: no link between it and the star's centre.
    auto* gateway = group->create_router(fmt::format("{}-{}-gw", spec.group, i));
    group->seal();
    sg4::SplitDuplexLink* uplink =
        top->create_split_duplex_link(fmt::format("{}-{}-{}", spec.group, i, spec.uplink), spec.group_link.bandwidth);
    uplink->set_latency(spec.group_link.latency);
    if (spec.uplink_is_switch_link) mark_switch_link(uplink);
    top->add_route(group->get_netpoint(), nullptr, gateway, nullptr, {{uplink, sg4::LinkInRoute::Direction::UP}});
  }
  top->seal();
  return hosts;
}

std::vector<sg4::Host*> build_nodes(const NodesSpec& spec) {
  return build_star_of_stars({"nodes", "node", "dev", "nic", spec.nodes, spec.devices, spec.intra, spec.nic});
}
// nodes-end

std::vector<sg4::Host*> build_leaf_spine(const LeafSpineSpec& spec) {
  return build_star_of_stars(
      {"leaf-spine", "leaf", "host", "uplink", spec.leaves, spec.hosts, spec.link, spec.uplink(), true});
}

sg4::SplitDuplexLink* split_duplex_link(sg4::NetZone* zone, const std::string& name, const LinkSpec& spec) {
  sg4::SplitDuplexLink* link = zone->create_split_duplex_link(name, spec.bandwidth);
  link->set_latency(spec.latency);
  return link;
}

// The switches that reduce in the network, after the GPUs (ranks keep the GPUs' order):
// each node's NVSwitch when its GPUs have NVLink SHARP, each rail's switch when the NICs'
// fabric has SHARP. Their hosts say `role` (the platform keeps them apart from the ranks'
// hosts) and which node or rail they serve.
void add_reducing_switches(const RailSpec& spec, RailZone& rail, std::vector<sg4::Host*>& hosts) {
  sg4::NetZone* zone = rail.get_iface();
  if (find_gpu_model(spec.gpu)->nvlink_sharp)
    for (int i = 0; i < spec.nodes; ++i) {
      sg4::Host* nvswitch = zone->create_host(fmt::format("node-{}-nvswitch", i), host_speed);
      nvswitch->set_properties({{"role", "nvswitch"}, {"node", fmt::format("node-{}", i)}});
      rail.add_node_switch(nvswitch->get_netpoint(), i);
      hosts.push_back(nvswitch);
    }
  if (find_nic_model(spec.nic_model)->sharp)
    for (int j = 0; j < spec.gpus; ++j) {
      sg4::Host* leaf = zone->create_host(fmt::format("rail-{}-switch", j), host_speed);
      leaf->set_properties({{"role", "sharp-switch"}, {"rail", std::to_string(j)}});
      rail.add_rail_switch(leaf->get_netpoint(), j);
      hosts.push_back(leaf);
    }
}

// rail-begin
// One RailZone (rail_zone.hpp) holds every GPU, with its NVLink port and its NIC, and the
// rails' uplinks; it routes each message by the two GPUs' node and rail. Each host says
// its node in the property `node`, which groups the ranks of hierarchical algorithms, and
// what it is (gpu, nic, cpu, rail), which NCCL's transport reads (src/nccl/system.hpp).
std::vector<sg4::Host*> build_rail(const RailSpec& spec) {
  auto* rail = new RailZone("rail", spec.gpus, spec.pxn);  // owned by the engine, as every netzone
  sg4::NetZone* zone = rail->get_iface();
  std::vector<sg4::Host*> hosts;
  for (int i = 0; i < spec.nodes; ++i)
    for (int j = 0; j < spec.gpus; ++j) {
      const std::string name = fmt::format("node-{}-gpu-{}", i, j);
      sg4::Host* gpu = zone->create_host(name, host_speed);
      gpu->set_properties({{"node", fmt::format("node-{}", i)}, {"rail", std::to_string(j)}, {"gpu", spec.gpu},
                           {"nic", spec.nic_model}, {"cpu", spec.cpu}});
      hosts.push_back(gpu);
      rail->add_gpu(gpu->get_netpoint(), {split_duplex_link(zone, name + "_nvlink", spec.nvlink),
                                          split_duplex_link(zone, name + "_nic", spec.nic)});
    }
  for (int j = 0; j < spec.gpus; ++j) {
    sg4::SplitDuplexLink* uplink = split_duplex_link(zone, fmt::format("rail-{}_uplink", j), spec.uplink());
    mark_switch_link(uplink);
    rail->add_rail_uplink(uplink);
  }
  add_reducing_switches(spec, *rail, hosts);
  zone->seal();
  return hosts;
}
// rail-end

struct Builder {
  std::vector<sg4::Host*> operator()(const StarSpec& star) const { return build_star("star", star.hosts, star.link); }
  std::vector<sg4::Host*> operator()(const RackSpec& rack) const {
    return build_star("rack", rack.hosts, rack.link, rack.slow_host, rack.slow_bandwidth);
  }
  std::vector<sg4::Host*> operator()(const FatTreeSpec& tree) const { return build_fat_tree(tree); }
  std::vector<sg4::Host*> operator()(const TorusSpec& torus) const { return build_torus(torus); }
  std::vector<sg4::Host*> operator()(const DragonflySpec& fly) const { return build_dragonfly(fly); }
  std::vector<sg4::Host*> operator()(const NodesSpec& nodes) const { return build_nodes(nodes); }
  std::vector<sg4::Host*> operator()(const RailSpec& rail) const { return build_rail(rail); }
  std::vector<sg4::Host*> operator()(const LeafSpineSpec& spine) const { return build_leaf_spine(spine); }
};

}  // namespace

std::vector<sg4::Host*> generate_platform(const GeneratorSpec& spec) { return std::visit(Builder{}, spec); }

}  // namespace collsim
