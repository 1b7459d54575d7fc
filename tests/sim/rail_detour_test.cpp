// A GPU whose NIC is detoured (recovery keeps a GPU whose NIC failed, docs/recovery.md, "A GPU
// kept when only its NIC fails") reaches its rail's SHARP switch (CollNet's reduction: switch
// i serves GPU i of every node) through the node mate's NIC, as its traffic to other nodes
// goes: NVLink to the mate, the mate's NIC to the mate's rail, the spine to its own rail.
// Routes read from SimGrid in a child process (one engine each), against the links written
// out here from the platform's shape (docs/topologies.md, rail:N:G: NVLink 0.5 us a port, a
// NIC and a rail uplink 2 us each on dgx-h100).
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <string>
#include <vector>

#include "platform/platform.hpp"
#include "platform/rail_zone.hpp"
#include "util/child_process.hpp"

namespace sg4 = simgrid::s4u;
using namespace collsim;

namespace {

// The route from `from` to `to` as "link,link,... | latency in ns".
std::string route(const std::string& from, const std::string& to) {
  std::vector<sg4::Link*> links;
  double latency = 0;
  sg4::Host::by_name(from)->route_to(sg4::Host::by_name(to), links, &latency);
  std::vector<std::string> names;
  for (const sg4::Link* link : links) names.push_back(link->get_name());
  return fmt::format("{} | {:.0f}", fmt::join(names, ","), latency * 1e9);
}

// On dgx-h100:2:ndr-sharp: node 1's GPU 5 to rail 5's switch and back, as built, detoured
// through node 1's GPU 0, and restored; one line each.
std::string switch_routes() {
  const ChildOutcome child = run_in_child([] {
    int argc = 2;
    char name[] = "test", quiet[] = "--log=root.thresh:critical";
    char* argv[] = {name, quiet, nullptr};
    sg4::Engine engine(&argc, argv);
    build_platform(engine, "dgx-h100:2:ndr-sharp", "");
    const sg4::Host* gpu = sg4::Host::by_name("node-1-gpu-5");
    auto* zone = dynamic_cast<RailZone*>(gpu->get_englobing_zone()->get_impl());
    if (zone == nullptr) return std::string("no rail zone");
    std::vector<std::string> lines;
    auto both = [&] {
      lines.push_back(route("node-1-gpu-5", "rail-5-switch"));
      lines.push_back(route("rail-5-switch", "node-1-gpu-5"));
    };
    both();
    zone->detour_nic(gpu->get_netpoint(), sg4::Host::by_name("node-1-gpu-0")->get_netpoint());
    both();
    lines.push_back(route("node-1-gpu-0", "rail-0-switch"));  // the mate's own: unchanged
    zone->restore_nic(gpu->get_netpoint());
    both();
    return fmt::format("{}", fmt::join(lines, "\n"));
  });
  REQUIRE(child.exit_code == 0);
  return child.output;
}

}  // namespace

TEST_CASE("a detoured GPU reaches its rail's SHARP switch through its node mate's NIC and the rails' uplinks") {
  const std::string own = "node-1-gpu-5_nic_UP | 2000\nnode-1-gpu-5_nic_DOWN | 2000";
  // NVLink 0.5 + 0.5 us, the mate's NIC 2 us, rail 0's uplink and rail 5's 2 us each
  const std::string detoured =
      "node-1-gpu-5_nvlink_UP,node-1-gpu-0_nvlink_DOWN,node-1-gpu-0_nic_UP,rail-0_uplink_UP,rail-5_uplink_DOWN | 7000\n"
      "rail-5_uplink_UP,rail-0_uplink_DOWN,node-1-gpu-0_nic_DOWN,node-1-gpu-0_nvlink_UP,node-1-gpu-5_nvlink_DOWN | 7000";
  CHECK(switch_routes() == fmt::format("{}\n{}\nnode-1-gpu-0_nic_UP | 2000\n{}", own, detoured, own));
}
