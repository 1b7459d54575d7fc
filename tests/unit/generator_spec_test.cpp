// Generator strings: what each family parses into, and the one-line error for bad input
// (no SimGrid engine; tests/sim/topology_test.cpp builds the platforms).
#include <doctest/doctest.h>

#include "platform/generator_spec.hpp"
#include "util/errors.hpp"

using namespace collsim;

namespace {

template <typename Spec>
Spec parsed(const std::string& text) {
  const auto spec = parse_generator(text, "topology");
  REQUIRE(spec.has_value());
  REQUIRE(std::holds_alternative<Spec>(*spec));
  return std::get<Spec>(*spec);
}

std::string error_of(const std::string& text) {
  try {
    parse_generator(text, "topology");
  } catch (const InputError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("star and rack") {
  const auto star = parsed<StarSpec>("star:16:1GBps:5us");
  CHECK(star.hosts == 16);
  CHECK(star.link.bandwidth == 1e9);
  CHECK(star.link.latency == doctest::Approx(5e-6).scale(0));
  const auto rack = parsed<RackSpec>("rack:8:3:10Gbps");
  CHECK(rack.hosts == 8);
  CHECK(rack.slow_host == 3);
  CHECK(rack.slow_bandwidth == 1.25e9);
  CHECK(rack.link.bandwidth == 10e9);  // the other links keep the default
  CHECK(rack.link.latency == 1e-6);
}

TEST_CASE("fat tree: one value per level in DOWN, UP and COUNT") {
  const auto tree = parsed<FatTreeSpec>("fat-tree:2:4,4:1,2:1,2:25GBps");
  CHECK(tree.levels == 2);
  CHECK(tree.down == std::vector<unsigned>{4, 4});
  CHECK(tree.up == std::vector<unsigned>{1, 2});
  CHECK(tree.count == std::vector<unsigned>{1, 2});
  CHECK(tree.link.bandwidth == 25e9);
  CHECK(tree.link.latency == 1e-6);
}

TEST_CASE("torus: any number of dimensions joined by x") {
  CHECK(parsed<TorusSpec>("torus:4x4").dimensions == std::vector<unsigned long>{4, 4});
  const auto torus = parsed<TorusSpec>("torus:4x3x2:1GBps:2us");
  CHECK(torus.dimensions == std::vector<unsigned long>{4, 3, 2});
  CHECK(torus.link.bandwidth == 1e9);
  CHECK(torus.link.latency == doctest::Approx(2e-6).scale(0));
  CHECK(parsed<TorusSpec>("torus:8").dimensions == std::vector<unsigned long>{8});
}

TEST_CASE("dragonfly: link multiplicities are optional") {
  const auto plain = parsed<DragonflySpec>("dragonfly:4:4:2");
  CHECK(plain.groups == 4);
  CHECK(plain.global_links == 1);
  CHECK(plain.routers == 4);
  CHECK(plain.local_links == 1);
  CHECK(plain.nodes == 2);
  const auto fat = parsed<DragonflySpec>("dragonfly:3,2:5,3:4:1GBps");
  CHECK(fat.groups == 3);
  CHECK(fat.global_links == 2);
  CHECK(fat.routers == 5);
  CHECK(fat.local_links == 3);
  CHECK(fat.nodes == 4);
  CHECK(fat.link.bandwidth == 1e9);
}

TEST_CASE("nodes: defaults, then INTRA_BW, NIC_BW, INTRA_LAT, NIC_LAT in this order") {
  const auto plain = parsed<NodesSpec>("nodes:4:8");
  CHECK(plain.nodes == 4);
  CHECK(plain.devices == 8);
  CHECK(plain.intra.bandwidth == 100e9);
  CHECK(plain.intra.latency == doctest::Approx(0.5e-6).scale(0));
  CHECK(plain.nic.bandwidth == 12.5e9);
  CHECK(plain.nic.latency == doctest::Approx(2e-6).scale(0));
  const auto all = parsed<NodesSpec>("nodes:2:4:50GBps:25Gbps:1us:3us");
  CHECK(all.intra.bandwidth == 50e9);
  CHECK(all.nic.bandwidth == 25e9 / 8);
  CHECK(all.intra.latency == doctest::Approx(1e-6).scale(0));
  CHECK(all.nic.latency == doctest::Approx(3e-6).scale(0));
}

TEST_CASE("rail: DGX H100 defaults, then NVLINK_BW, NIC_BW, NVLINK_LAT, NIC_LAT, OVERSUB, the presets") {
  const auto plain = parsed<RailSpec>("rail:4:8");
  CHECK(plain.nodes == 4);
  CHECK(plain.gpus == 8);
  CHECK(plain.nvlink.bandwidth == 450e9);
  CHECK(plain.nic.bandwidth == 400e9 / 8);
  CHECK(plain.oversubscription == 1);
  CHECK(plain.uplink().bandwidth == 4 * 50e9);
  CHECK(plain.uplink().latency == plain.nic.latency);
  const auto all = parsed<RailSpec>("rail:2:4:100GBps:200Gbps:1us:3us:2.5");
  CHECK(all.nvlink.bandwidth == 100e9);
  CHECK(all.nic.bandwidth == 25e9);
  CHECK(all.nvlink.latency == doctest::Approx(1e-6).scale(0));
  CHECK(all.nic.latency == doctest::Approx(3e-6).scale(0));
  CHECK(all.uplink().bandwidth == 2 * 25e9 / 2.5);
  const auto h100 = parsed<RailSpec>("dgx-h100:16");
  CHECK(h100.nodes == 16);
  CHECK(h100.gpus == 8);
  CHECK(h100.nvlink.bandwidth == 450e9);
  CHECK(h100.nic.bandwidth == 50e9);
  const auto a100 = parsed<RailSpec>("dgx-a100:2:4");
  CHECK(a100.gpus == 8);
  CHECK(a100.nvlink.bandwidth == 300e9);
  CHECK(a100.nic.bandwidth == 25e9);
  CHECK(a100.oversubscription == 4);
  // the catalogue's nodes: GPU, NIC and CPU, the NIC and OVERSUB in either order
  const auto h200 = parsed<RailSpec>("dgx-h200:2:roce400:2");
  CHECK(h200.gpu == "h200");
  CHECK(h200.nic_model == "roce400");
  CHECK(h200.nic.bandwidth == 50e9);
  CHECK(h200.oversubscription == 2);
  const auto nvl72 = parsed<RailSpec>("gb200-nvl72:3");
  CHECK(nvl72.gpus == 72);
  CHECK(nvl72.nvlink.bandwidth == 900e9);
  CHECK(nvl72.cpu == "arm");
  const auto named = parsed<RailSpec>("rail:2:4:b200:efa400");
  CHECK(named.gpu == "b200");
  CHECK(named.nvlink.bandwidth == 900e9);
  CHECK(named.nic_model == "efa400");
  const auto spine = parsed<LeafSpineSpec>("leaf-spine:4:16:12.5GBps:2us:3");
  CHECK(spine.leaves == 4);
  CHECK(spine.hosts == 16);
  CHECK(spine.uplink().bandwidth == doctest::Approx(16 * 12.5e9 / 3).scale(0));
  CHECK(spine.uplink().latency == doctest::Approx(2e-6).scale(0));
}

TEST_CASE("files are not generators") {
  CHECK_FALSE(parse_generator("topologies/torus-4x4.xml", "topology").has_value());
  CHECK_FALSE(parse_generator("torus-4x4.xml", "topology").has_value());
  CHECK_FALSE(parse_generator("my:platform.xml", "topology").has_value());
  CHECK_FALSE(parse_generator("/tmp/a:b", "topology").has_value());
}

TEST_CASE("every family's examples parse") {
  for (const auto& family : generator_families())
    for (const auto& example : family.examples) {
      CAPTURE(example);
      CHECK(parse_generator(example, "topology").has_value());
      CHECK(example.rfind(family.name + ":", 0) == 0);
    }
}

TEST_CASE("bad input: one message naming the field, the string, the syntax and an example") {
  const std::pair<const char*, const char*> cases[]{
      {"star", "0 parameters given, star takes 1 to 3"},
      {"star:0", "P '0' must be an integer from 1 to 1000000"},
      {"star:8:10Gb", "BW: unknown unit 'Gb' in '10Gb'"},
      {"rack:8:8:1GBps", "SLOW '8' must be an integer from 0 to 7"},
      {"rack:8:3", "2 parameters given, rack takes 3 to 5"},
      {"fat-tree:2:4:1,2:1,2", "DOWN '4' has 1 value, LEVELS says 2"},
      {"fat-tree:2:4,4:1,0:1,2", "UP '0' must be an integer from 1 to 1000000"},
      {"fat-tree:1:4:1000:1000", "8000001 links is too many; at most 4000000"},
      {"torus:4y4", "dimension '4y4' must be an integer"},
      {"torus:4x", "dimension '' must be an integer"},
      {"torus:1000x1000x2", "2000000 hosts is too many; at most 1000000"},
      {"torus:4x4:1GBps:1us:1", "4 parameters given, torus takes 1 to 3"},
      {"dragonfly:8:4:2", "G = 8 groups need R >= G routers per group"},
      {"dragonfly:4,1,1:4:2", "'4,1,1' must be G or G,GL"},
      {"dragonfly:4:4:0", "N '0' must be an integer from 1 to 1000000"},
      {"nodes:4", "1 parameter given, nodes takes 2 to 6"},
      {"nodes:4:8:100GBps:12.5GBps:-1us", "INTRA_LAT: '-1us' is negative"},
      {"rail:4", "1 parameter given, rail takes 2 to 7"},
      {"rail:4:8:1GBps:1GBps:1us:1us:0.5", "OVERSUB '0.5' must be a number from 1 (non-blocking) to 1000"},
      {"rail:4:8:1GBps:1GBps:1us:1us:x", "OVERSUB 'x' must be a number"},
      {"rail:1000:1000", "4002001 links is too many"},
      {"dgx-h100:0", "N '0' must be an integer from 1 to 125000"},
      {"dgx-a100:2:1:1:ndr", "4 parameters given, dgx-a100 takes 1 to 3"},
      {"dgx-a100:2:1:1", "OVERSUB is given twice"},
      {"dgx-h100:2:ndr:hdr", "NIC is given twice"},
      {"dgx-h100:2:cx7", "'cx7' is no NIC"},
      {"rail:2:4:h101", "NVLINK_BW 'h101' is no bandwidth and no GPU (did you mean 'h100'?)"},
      {"gb200-nvl72:0", "N '0' must be an integer from 1 to 13888"},
      {"leaf-spine:4:8:1GBps:1us:nan", "OVERSUB 'nan' must be a number"},
  };
  for (const auto& [text, problem] : cases) {
    CAPTURE(text);
    const std::string message = error_of(text);
    CHECK(message.rfind(std::string("topology: '") + text + "': ", 0) == 0);
    CHECK(message.find(problem) != std::string::npos);
    CHECK(message.find("; syntax ") != std::string::npos);
    CHECK(message.find(", e.g. ") != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
}

TEST_CASE("an unknown generator is named, with the allowed families") {
  CHECK(error_of("tours:4x4") ==
        "topology: unknown generator 'tours' in 'tours:4x4' (did you mean 'torus'?); allowed: star, rack, fat-tree, "
        "torus, dragonfly, nodes, rail, dgx-h100, dgx-h200, dgx-a100, gb200-nvl72, leaf-spine (or a platform file; "
        "`collsim list topologies`)");
}
