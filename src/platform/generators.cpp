#include "platform/generators.hpp"

#include <fmt/format.h>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

constexpr double host_speed = 1e9;  // flop/s, as the hosts of topologies/*.xml
constexpr auto split_duplex = sg4::Link::SharingPolicy::SPLITDUPLEX;

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
  const sg4::ClusterCallbacks leaves([&hosts](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long) {
    sg4::Host* host = zone->create_host(fmt::format("host-{}", hosts.size()), host_speed);
    hosts.push_back(host);
    return std::make_pair(host->get_netpoint(), static_cast<simgrid::kernel::routing::NetPoint*>(nullptr));
  });
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
// A star of nodes: each node is its own star zone (hierarchical algorithms group ranks by
// the host's englobing zone), whose devices reach the node's gateway over private intra-
// node links; the node reaches the top-level switch over its one NIC link. A route between
// nodes: device UP, NIC UP, the other node's NIC DOWN, device DOWN.
std::vector<sg4::Host*> build_nodes(const NodesSpec& spec) {
  std::vector<sg4::Host*> hosts;
  auto* top = sg4::create_star_zone("nodes");
  for (int i = 0; i < spec.nodes; ++i) {
    auto* node = sg4::create_star_zone(fmt::format("node-{}", i));
    node->set_parent(top);
    for (int j = 0; j < spec.devices; ++j) {
      const std::string name = fmt::format("node-{}-dev-{}", i, j);
      sg4::Host* device = node->create_host(name, host_speed);
      hosts.push_back(device);
      sg4::Link* link = node->create_split_duplex_link(name + "_link", spec.intra.bandwidth);
      link->set_latency(spec.intra.latency);
      node->add_route(device->get_netpoint(), nullptr, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}});
    }
    // The gateway is the node's switch itself: no link between it and the star's centre.
    auto* gateway = node->create_router(fmt::format("node-{}-gw", i));
    node->seal();
    sg4::Link* nic = top->create_split_duplex_link(fmt::format("node-{}-nic", i), spec.nic.bandwidth);
    nic->set_latency(spec.nic.latency);
    top->add_route(node->get_netpoint(), nullptr, gateway, nullptr, {{nic, sg4::LinkInRoute::Direction::UP}});
  }
  top->seal();
  return hosts;
}
// nodes-end

struct Builder {
  std::vector<sg4::Host*> operator()(const StarSpec& star) const { return build_star("star", star.hosts, star.link); }
  std::vector<sg4::Host*> operator()(const RackSpec& rack) const {
    return build_star("rack", rack.hosts, rack.link, rack.slow_host, rack.slow_bandwidth);
  }
  std::vector<sg4::Host*> operator()(const FatTreeSpec& tree) const { return build_fat_tree(tree); }
  std::vector<sg4::Host*> operator()(const TorusSpec& torus) const { return build_torus(torus); }
  std::vector<sg4::Host*> operator()(const DragonflySpec& fly) const { return build_dragonfly(fly); }
  std::vector<sg4::Host*> operator()(const NodesSpec& nodes) const { return build_nodes(nodes); }
};

}  // namespace

std::vector<sg4::Host*> generate_platform(const GeneratorSpec& spec) { return std::visit(Builder{}, spec); }

}  // namespace collsim
