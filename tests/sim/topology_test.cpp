// Generated and file platforms, built in child processes (one engine each): hosts in rank
// order, link counts, and the latency and bottleneck bandwidth of the route between every
// pair of hosts, against values worked out here from each topology's shape.
#include <cctype>
#include <chrono>
#include <cmath>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "platform/platform.hpp"
#include "util/child_process.hpp"

namespace sg4 = simgrid::s4u;
using namespace collsim;

namespace {

constexpr double L = 1e-6, B = 10e9;  // the generators' default link

struct Expected {
  double latency;
  double bandwidth;
};
using RouteRule = std::function<Expected(int a, int b)>;

// Runs `work` on a fresh engine in a child process (one engine per process).
ChildOutcome with_engine(const std::function<std::string(sg4::Engine&)>& work) {
  return run_in_child([&] {
    int argc = 2;
    char name[] = "test", quiet[] = "--log=root.thresh:critical";
    char* argv[] = {name, quiet, nullptr};
    sg4::Engine engine(&argc, argv);
    return work(engine);
  });
}

// Builds `topology` in a child and compares every host name and every route with the
// expectations; returns "" or the first few mismatches.
std::string check_platform(const std::string& topology, const std::vector<std::string>& names, size_t links,
                           const RouteRule& route) {
  const ChildOutcome child = with_engine([&](sg4::Engine& engine) {
    const PlatformInfo platform = build_platform(engine, topology, "");
    std::string problems;
    if (platform.hosts.size() != names.size())
      return fmt::format("{} hosts, expected {}", platform.hosts.size(), names.size());
    if (platform.link_count != links) problems += fmt::format("{} links, expected {}; ", platform.link_count, links);
    for (size_t r = 0; r < names.size(); ++r)
      if (platform.hosts[r]->get_name() != names[r])
        problems += fmt::format("rank {} on {}, expected {}; ", r, platform.hosts[r]->get_name(), names[r]);
    for (int a = 0; a < static_cast<int>(names.size()) && problems.size() < 500; ++a)
      for (int b = 0; b < static_cast<int>(names.size()) && problems.size() < 500; ++b) {
        if (a == b) continue;
        const RouteCost got = route_cost(platform.hosts[a], platform.hosts[b]);
        const Expected want = route(a, b);
        if (std::abs(got.latency - want.latency) > 1e-12 || got.bandwidth != want.bandwidth)
          problems += fmt::format("{} -> {}: latency {:g} B {:g}, expected {:g} and {:g}; ", names[a], names[b],
                                  got.latency, got.bandwidth, want.latency, want.bandwidth);
      }
    return problems;
  });
  if (child.exit_code != 0) return "child failed: " + child.output;
  return child.output;
}

std::vector<std::string> host_names(int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.push_back(fmt::format("host-{}", i));
  return names;
}

// Torus: one link per hop, each dimension the short way round.
RouteRule torus_rule(std::vector<int> dims, double latency) {
  return [dims, latency](int a, int b) {
    int hops = 0;
    for (int d : dims) {
      const int distance = std::abs(a % d - b % d);
      hops += std::min(distance, d - distance);
      a /= d;
      b /= d;
    }
    return Expected{hops * latency, B};
  };
}

// Fat tree: up to the lowest level whose subtree holds both hosts, and down again.
RouteRule fat_tree_rule(std::vector<int> down) {
  return [down](int a, int b) {
    int level = 0, subtree = 1;
    while (a / subtree != b / subtree) subtree *= down[static_cast<size_t>(level++)];
    return Expected{2 * level * L, B};
  };
}

// Dragonfly with one chassis: host link, [local link to the router wired to the other
// group], global link, [local link to the destination's router], host link.
RouteRule dragonfly_rule(int routers, int nodes) {
  return [routers, nodes](int a, int b) {
    const int ga = a / (routers * nodes), ra = a / nodes % routers;
    const int gb = b / (routers * nodes), rb = b / nodes % routers;
    int links = 2;
    if (ga == gb && ra != rb) links += 1;
    if (ga != gb) links += 1 + (ra != gb) + (rb != ga);
    return Expected{links * L, B};
  };
}

RouteRule nodes_rule(int devices, double intra_bw, double intra_lat, double nic_bw, double nic_lat) {
  return [=](int a, int b) {
    if (a / devices == b / devices) return Expected{2 * intra_lat, intra_bw};
    return Expected{2 * intra_lat + 2 * nic_lat, std::min(intra_bw, nic_bw)};
  };
}

std::vector<std::string> device_names(int nodes, int devices) {
  std::vector<std::string> names;
  for (int i = 0; i < nodes; ++i)
    for (int j = 0; j < devices; ++j) names.push_back(fmt::format("node-{}-dev-{}", i, j));
  return names;
}

// rail:N:G: NVLink inside a node; the NICs of one rail; else both rails' uplinks too.
RouteRule rail_rule(int nodes, int gpus, double nvlink_bw, double nvlink_lat, double nic_bw, double nic_lat,
                    double oversub) {
  return [=](int a, int b) {
    if (a / gpus == b / gpus) return Expected{2 * nvlink_lat, nvlink_bw};
    if (a % gpus == b % gpus) return Expected{2 * nic_lat, nic_bw};
    return Expected{4 * nic_lat, std::min(nic_bw, nodes * nic_bw / oversub)};
  };
}

std::vector<std::string> gpu_names(int nodes, int gpus) {
  std::vector<std::string> names;
  for (int i = 0; i < nodes; ++i)
    for (int j = 0; j < gpus; ++j) names.push_back(fmt::format("node-{}-gpu-{}", i, j));
  return names;
}

const std::string files = COLLSIM_SOURCE_DIR "/topologies/";

}  // namespace

TEST_SUITE("sim") {
  TEST_CASE("torus: host order, 2 links per host and dimension, one hop per link") {
    // links: each host owns one split-duplex link per dimension (2 halves), plus the loopback
    CHECK(check_platform("torus:4x4", host_names(16), 2 * 2 * 16 + 1, torus_rule({4, 4}, L)) == "");
    CHECK(check_platform(files + "torus-4x4.xml", host_names(16), 65, torus_rule({4, 4}, L)) == "");
    CHECK(check_platform("torus:4x4x4", host_names(64), 2 * 3 * 64 + 1, torus_rule({4, 4, 4}, L)) == "");
    CHECK(check_platform(files + "torus-4x4x4.xml", host_names(64), 385, torus_rule({4, 4, 4}, L)) == "");
    // odd and tiny dimensions, another link
    auto odd = torus_rule({3, 5, 2}, 3e-6);
    CHECK(check_platform("torus:3x5x2:2GBps:3us", host_names(30), 2 * 3 * 30 + 1,
                         [&](int a, int b) { return Expected{odd(a, b).latency, 2e9}; }) == "");
  }

  TEST_CASE("fat tree: host order, link count, 2 links per level climbed") {
    // fat-tree:2:4,4:1,2:1,2: 16 host links + 4 leaf switches x 2 parents x 2 links = 32
    CHECK(check_platform("fat-tree:2:4,4:1,2:1,2", host_names(16), 2 * 32 + 1, fat_tree_rule({4, 4})) == "");
    CHECK(check_platform(files + "fat-tree-16.xml", host_names(16), 65, fat_tree_rule({4, 4})) == "");
    // 3 levels: 12 hosts; 12x1x1 + 6 level-1 switches x 2 x 1 + 4 level-2 switches x 2 x 2 = 40
    CHECK(check_platform("fat-tree:3:2,3,2:1,2,2:1,1,2", host_names(12), 2 * 40 + 1, fat_tree_rule({2, 3, 2})) == "");
  }

  TEST_CASE("dragonfly: host order, link count, minimal routes") {
    // 32 host links, 4 groups x 6 router pairs, 6 group pairs: 62
    CHECK(check_platform("dragonfly:4:4:2", host_names(32), 2 * 62 + 1, dragonfly_rule(4, 2)) == "");
    CHECK(check_platform(files + "dragonfly-32.xml", host_names(32), 125, dragonfly_rule(4, 2)) == "");
    // 3 groups of 5 routers, 1 host each: 15 + 3 x 10 + 3 = 48
    CHECK(check_platform("dragonfly:3:5:1", host_names(15), 2 * 48 + 1, dragonfly_rule(5, 1)) == "");
  }

  TEST_CASE("dragonfly: GL and RL multiply the global and local links' bandwidth") {
    const ChildOutcome child = with_engine([](sg4::Engine& engine) {
      build_platform(engine, "dragonfly:4,2:4,3:2:1GBps", "");
      std::map<double, int> halves;
      for (const sg4::Link* link : engine.get_all_links())
        if (link->get_name() != "__loopback__") ++halves[link->get_bandwidth()];
      std::string out;
      for (const auto& [bandwidth, count] : halves) out += fmt::format("{:g}:{} ", bandwidth, count);
      return out;
    });
    REQUIRE_MESSAGE(child.exit_code == 0, child.output);
    // 32 host links at 1 GBps, 24 local links at 3 GBps, 6 global links at 2 GBps; 2 halves each
    CHECK(child.output == "1e+09:64 2e+09:12 3e+09:48 ");
  }

  TEST_CASE("nodes: node-major order, each node its own zone, NIC routes") {
    CHECK(check_platform("nodes:4:8", device_names(4, 8), 2 * (32 + 4) + 1,
                         nodes_rule(8, 100e9, 0.5e-6, 12.5e9, 2e-6)) == "");
    CHECK(check_platform(files + "nodes-4x8.xml", device_names(4, 8), 73, nodes_rule(8, 100e9, 0.5e-6, 12.5e9, 2e-6)) ==
          "");
    CHECK(check_platform("nodes:3:12:50GBps:200GBps:1us:3us", device_names(3, 12), 2 * (36 + 3) + 1,
                         nodes_rule(12, 50e9, 1e-6, 200e9, 3e-6)) == "");
    for (const std::string& topology : {std::string("nodes:3:12"), files + "nodes-4x8.xml"}) {
      CAPTURE(topology);
      const ChildOutcome child = with_engine([&](sg4::Engine& engine) {
        std::string zones;
        for (const sg4::Host* host : build_platform(engine, topology, "").hosts)
          zones += host->get_englobing_zone()->get_name() + " ";
        return zones;
      });
      REQUIRE_MESSAGE(child.exit_code == 0, child.output);
      std::string want;
      const int nodes = topology == "nodes:3:12" ? 3 : 4, devices = nodes == 3 ? 12 : 8;
      for (int i = 0; i < nodes; ++i)
        for (int j = 0; j < devices; ++j) want += fmt::format("node-{} ", i);
      CHECK(child.output == want);
    }
  }

  TEST_CASE("rail: node-major GPUs, NVLink inside a node, NICs on rails, uplinks between rails") {
    // cables: an NVLink port and a NIC per GPU, an uplink per rail; 2 halves each, + loopback
    auto links = [](int n, int g) { return static_cast<size_t>(2 * (2 * n * g + g) + 1); };
    CHECK(check_platform("rail:4:8", gpu_names(4, 8), links(4, 8), rail_rule(4, 8, 450e9, 0.5e-6, 50e9, 2e-6, 1)) ==
          "");
    CHECK(check_platform("rail:3:5:100GBps:25GBps:1us:3us:2", gpu_names(3, 5), links(3, 5),
                         rail_rule(3, 5, 100e9, 1e-6, 25e9, 3e-6, 2)) == "");
    CHECK(check_platform("rail:2:3:100GBps:25GBps:1us:3us:4", gpu_names(2, 3), links(2, 3),
                         rail_rule(2, 3, 100e9, 1e-6, 25e9, 3e-6, 4)) == "");
    CHECK(check_platform("rail:1:4", gpu_names(1, 4), links(1, 4), rail_rule(1, 4, 450e9, 0.5e-6, 50e9, 2e-6, 1)) == "");
    CHECK(check_platform("rail:5:1", gpu_names(5, 1), links(5, 1), rail_rule(5, 1, 450e9, 0.5e-6, 50e9, 2e-6, 1)) == "");
    CHECK(check_platform("dgx-h100:2", gpu_names(2, 8), links(2, 8), rail_rule(2, 8, 450e9, 0.5e-6, 50e9, 2e-6, 1)) ==
          "");
    CHECK(check_platform("dgx-a100:3:2", gpu_names(3, 8), links(3, 8), rail_rule(3, 8, 300e9, 0.5e-6, 25e9, 2e-6, 2)) ==
          "");
  }

  TEST_CASE("rail: route counts by kind, link names, the node property") {
    const int n = 3, g = 4;
    const ChildOutcome child = with_engine([&](sg4::Engine& engine) {
      const PlatformInfo platform = build_platform(engine, fmt::format("rail:{}:{}", n, g), "");
      std::map<std::string, int> kinds;  // the route's link names, with the GPU indices blanked
      for (const sg4::Host* a : platform.hosts)
        for (const sg4::Host* b : platform.hosts) {
          if (a == b) continue;
          std::vector<sg4::Link*> route;
          a->route_to(b, route, nullptr);
          std::string kind;
          for (const sg4::Link* link : route) {
            std::string name = link->get_name();
            for (char& c : name)
              if (std::isdigit(static_cast<unsigned char>(c))) c = '#';
            kind += name + " ";
          }
          ++kinds[kind];
        }
      std::string out;
      for (const auto& [kind, count] : kinds) out += fmt::format("{}= {}; ", kind, count);
      for (const sg4::Host* host : platform.hosts) out += std::string(host->get_property("node")) + " ";
      return out;
    });
    REQUIRE_MESSAGE(child.exit_code == 0, child.output);
    std::string want = fmt::format("node-#-gpu-#_nic_UP node-#-gpu-#_nic_DOWN = {}; ", n * (n - 1) * g) +
                       fmt::format("node-#-gpu-#_nic_UP rail-#_uplink_UP rail-#_uplink_DOWN node-#-gpu-#_nic_DOWN = {}; ",
                                   n * g * (n - 1) * (g - 1)) +
                       fmt::format("node-#-gpu-#_nvlink_UP node-#-gpu-#_nvlink_DOWN = {}; ", n * g * (g - 1));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < g; ++j) want += fmt::format("node-{} ", i);
    CHECK(child.output == want);
  }

  TEST_CASE("leaf-spine: one NIC per host, uplinks of H x BW / OVERSUB") {
    auto names = [](int leaves, int hosts) {
      std::vector<std::string> all;
      for (int i = 0; i < leaves; ++i)
        for (int j = 0; j < hosts; ++j) all.push_back(fmt::format("leaf-{}-host-{}", i, j));
      return all;
    };
    auto rule = [](int hosts, double bw, double lat, double oversub) {
      return [=](int a, int b) {
        if (a / hosts == b / hosts) return Expected{2 * lat, bw};
        return Expected{4 * lat, std::min(bw, hosts * bw / oversub)};
      };
    };
    CHECK(check_platform("leaf-spine:4:8", names(4, 8), 2 * (32 + 4) + 1, rule(8, B, L, 1)) == "");
    CHECK(check_platform("leaf-spine:3:2:5GBps:2us:4", names(3, 2), 2 * (6 + 3) + 1, rule(2, 5e9, 2e-6, 4)) == "");
  }

  TEST_CASE("rack: the slow host's routes have its bandwidth") {
    auto rack = [](int a, int b) { return Expected{2 * L, a == 3 || b == 3 ? 1.25e9 : B}; };
    CHECK(check_platform("rack:8:3:1.25GBps", host_names(8), 2 * 8 + 1, rack) == "");
    CHECK(check_platform(files + "rack-slow-link.xml", host_names(8), 17, rack) == "");
    CHECK(check_platform("star:5:2GBps:4us", host_names(5), 11,
                         [](int, int) { return Expected{8e-6, 2e9}; }) == "");
  }

  TEST_CASE("about 1024 hosts generate well under a second") {
    for (const char* topology : {"torus:32x32", "torus:16x8x8", "fat-tree:2:32,32:1,16:1,1", "dragonfly:8:16:8",
                                 "nodes:128:8", "star:1024", "dgx-h100:128", "leaf-spine:32:32"}) {
      CAPTURE(topology);
      const ChildOutcome child = with_engine([&](sg4::Engine& engine) {
        const auto start = std::chrono::steady_clock::now();
        const size_t hosts = build_platform(engine, topology, "").hosts.size();
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        return fmt::format("{} {}", hosts, took.count());
      });
      REQUIRE_MESSAGE(child.exit_code == 0, child.output);
      const auto space = child.output.find(' ');
      CHECK(child.output.substr(0, space) == "1024");
      const double seconds = std::stod(child.output.substr(space + 1));
      MESSAGE(std::string(topology) << ": " << seconds << " s");
      CHECK(seconds < 1.0);
    }
  }
}
