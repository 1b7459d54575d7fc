// The topology bound on a platform file's <cluster> (a SimGrid StarZone) reads each rank's up
// and down links once (model/star_routes.hpp) instead of every route of its cuts. Checked
// in child processes (one engine each): every route the lists give equals SimGrid's, the
// bound equals the one read route by route (cut, bytes, capacity, saturated links, in
// order), and its capacity equals the one worked out here from the cluster's links.
#include <doctest/doctest.h>

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <unistd.h>

#include "model/cut_bound.hpp"
#include "model/route_cache.hpp"
#include "model/star_routes.hpp"
#include "plan/locality.hpp"
#include "platform/platform.hpp"
#include "util/child_process.hpp"

namespace sg4 = simgrid::s4u;
using namespace collsim;

namespace {

// The same routes and links, but not a RouteCache: the bound reads every route of its cuts.
class RouteByRoute : public Network {
public:
  explicit RouteByRoute(const Network& base) : base_(base) {}
  const NetworkRoute& route(int from, int to) const override { return base_.route(from, to); }
  const NetworkLink& link(int id) const override { return base_.link(id); }
  size_t link_count() const override { return base_.link_count(); }

private:
  const Network& base_;
};

std::string describe(const CutBound& bound) {
  return fmt::format("{} | {:.17g} B | {:.17g} B/s | {:.17g} s | {} | {}", bound.cut, bound.bytes, bound.capacity, bound.time,
                     fmt::join(bound.bottleneck_links, ","), bound.unread);
}

// Loads `xml` in a child; returns "" if not a star, else "star | <bound>" after checking every
// route of the lists against SimGrid's ("route a->b differs" otherwise) and the bound against
// the one read route by route.
std::string bound_on(const std::string& xml, int p, Collective collective) {
  const auto path = std::filesystem::temp_directory_path() / fmt::format("collsim-star-{}.xml", getpid());
  std::ofstream(path) << xml;
  const ChildOutcome child = run_in_child([&] {
    int argc = 2;
    char name[] = "test", quiet[] = "--log=root.thresh:critical";
    char* argv[] = {name, quiet, nullptr};
    sg4::Engine engine(&argc, argv);
    const PlatformInfo platform = build_platform(engine, path.string(), "");
    const std::vector<sg4::Host*> hosts(platform.hosts.begin(), platform.hosts.begin() + p);
    const RouteCache routes(hosts);
    const RankPlaces places = places_of(hosts, platform.hosts);
    const auto star = star_routes(routes);
    if (!star) return std::string();
    for (int a = 0; a < p; ++a)
      for (int b = 0; b < p; ++b) {
        if (a == b) continue;
        std::vector<sg4::Link*> read;
        hosts[static_cast<size_t>(a)]->route_to(hosts[static_cast<size_t>(b)], read, nullptr);
        const auto built = star_route(*star, a, b);
        if (!std::equal(read.begin(), read.end(), built.begin(), built.end())) return fmt::format("route {}->{} differs", a, b);
      }
    const double bytes = 12e6;
    const CutBound fast = topology_cut_bound(collective, routes, places, 0, bytes);
    const CutBound slow = topology_cut_bound(collective, RouteByRoute(routes), places, 0, bytes);
    if (describe(fast) != describe(slow)) return fmt::format("star: {}\nroute by route: {}", describe(fast), describe(slow));
    return "star | " + describe(fast);
  });
  std::filesystem::remove(path);
  REQUIRE(child.exit_code == 0);
  return child.output;
}

std::string cluster(const std::string& attributes, int hosts) {
  return fmt::format(R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="h-" radical="0-{}" suffix="" speed="1Gf" bw="10GBps" lat="1us" {}/>
</platform>
)",
                     hosts - 1, attributes);
}

}  // namespace

TEST_SUITE("star_routes") {
  TEST_CASE("private links: a rank alone is the tightest cut, its uplink saturated") {
    // allreduce: rank 0 -> the rest needs n bytes through its own 10 GB/s uplink
    CHECK(bound_on(cluster("", 12), 12, Collective::allreduce) ==
          "star | rank 0 -> ranks 1-11 | 12000000 B | 10000000000 B/s | 0.0011999999999999999 s | c_link_0_UP | ");
  }

  TEST_CASE("a shared backbone of 25 GB/s limits the bisection") {
    // alltoall across 6 | 6 of 12: 6 x 6 / 12 x n = 3n bytes through the backbone; a rank
    // alone sends 11/12 n through 10 GB/s, less time than 3n / 25 GB/s
    const std::string got = bound_on(cluster(R"(bb_bw="25GBps" bb_lat="1us")", 12), 12, Collective::alltoall);
    CHECK(got == "star | ranks 0-5 -> ranks 6-11 (bisection) | 36000000 B | 25000000000 B/s | 0.0014400000000000001 s | c_backbone | ");
  }

  TEST_CASE("a fatpipe backbone limits nothing: the bisection's 6 uplinks do") {
    const std::string got =
        bound_on(cluster(R"(bb_bw="25GBps" bb_lat="1us" bb_sharing_policy="FATPIPE")", 12), 12, Collective::alltoall);
    CHECK(got.find("star | rank 0 -> ranks 1-11 | 11000000 B | 10000000000 B/s |") == 0);
  }

  TEST_CASE("shared private links, limiters and loopbacks give SimGrid's routes and the same bound") {
    for (const std::string attributes :
         {R"(sharing_policy="SHARED")", R"(limiter_link="15GBps" loopback_bw="100GBps" loopback_lat="0us")",
          R"(sharing_policy="FATPIPE" bb_bw="40GBps" bb_lat="2us")"}) {
      CAPTURE(attributes);
      for (Collective collective : {Collective::allreduce, Collective::alltoall, Collective::broadcast}) {
        const std::string got = bound_on(cluster(attributes, 9), 9, collective);
        CHECK(got.rfind("star | ", 0) == 0);
      }
    }
  }

  TEST_CASE("ranks on part of the cluster, and a platform that is no star") {
    CHECK(bound_on(cluster(R"(bb_bw="25GBps" bb_lat="1us")", 16), 10, Collective::alltoall).rfind("star | ", 0) == 0);
    const std::string full = R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><host id="c" speed="1Gf"/>
    <link id="ab" bandwidth="1GBps" latency="1us"/><link id="bc" bandwidth="1GBps" latency="1us"/>
    <route src="a" dst="b"><link_ctn id="ab"/></route>
    <route src="b" dst="c"><link_ctn id="bc"/></route>
    <route src="a" dst="c"><link_ctn id="ab"/><link_ctn id="bc"/></route>
  </zone>
</platform>
)";
    CHECK(bound_on(full, 3, Collective::allreduce) == "");
  }
}
