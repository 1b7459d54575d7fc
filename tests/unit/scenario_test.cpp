#include <doctest/doctest.h>

#include "scenario/scenario.hpp"
#include "util/errors.hpp"

using namespace collsim;
using nlohmann::json;

TEST_CASE("a full scenario resolves its units") {
  const auto s = parse_scenario(json::parse(R"({"name": "x", "topology": "star:8:10Gbps:1us", "workers": 8,
      "collective": {"kind": "allreduce", "algorithm": "naive", "size": "64MiB", "dtype": "float64", "op": "max"},
      "training": {"rounds": 3, "compute": "20ms"}, "seed": 7})"),
                                "");
  CHECK(s.workers == 8);
  CHECK(s.collective.size == 64.0 * 1024 * 1024);
  CHECK(s.collective.dtype == Dtype::float64);
  CHECK(s.collective.op == OpKind::max);
  CHECK(s.training.rounds == 3);
  CHECK(s.training.compute == doctest::Approx(0.02).scale(0));
  CHECK(s.seed == 7);
}

TEST_CASE("defaults: ring on star:8, ideal network") {
  const auto s = parse_scenario(json::object(), "");
  CHECK(s.collective.algorithm == "ring");
  CHECK(s.topology == "star:8");
  CHECK(s.network == NetworkModel::ideal);
  CHECK(parse_scenario(json::parse(R"({"collective": {"kind": "broadcast"}})"), "").collective.algorithm == "binomial");
}

TEST_CASE("unknown keys and bad values are named, with did-you-mean") {
  CHECK_THROWS_WITH_AS(parse_scenario(json::parse(R"({"wokers": 4})"), ""),
                       doctest::Contains("wokers: unknown key (did you mean 'workers'?)"), InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(json::parse(R"({"collective": {"algoritm": "ring"}})"), ""),
                       doctest::Contains("collective.algoritm: unknown key (did you mean 'algorithm'?)"), InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(json::parse(R"({"collective": {"algorithm": "rnig"}})"), ""),
                       doctest::Contains("did you mean 'ring'?"), InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(json::parse(R"({"workers": 0})"), ""), doctest::Contains("workers: 0 is out of range"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(json::parse(R"({"collective": {"size": -4}})"), ""),
                       doctest::Contains("collective.size: -4 is negative"), InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(json::parse(R"({"workers": 4, "collective": {"kind": "broadcast", "root": 4}})"), ""),
                       doctest::Contains("collective.root: 4 is not a rank"), InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(json::parse(R"({"network": "idael"})"), ""), doctest::Contains("did you mean 'ideal'?"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(json::parse(R"({"collective": {"size": 6}})"), ""),
                       doctest::Contains("not a whole number of float32"), InputError);
}

TEST_CASE("--set overrides nested fields, creating objects and parsing values") {
  json doc = json::object();
  apply_override(doc, "collective.algorithm=naive");
  apply_override(doc, "workers=4");
  apply_override(doc, "collective.size=1MiB");
  CHECK(doc["collective"]["algorithm"] == "naive");
  CHECK(doc["workers"] == 4);
  CHECK(doc["collective"]["size"] == "1MiB");
  CHECK_THROWS_AS(apply_override(doc, "novalue"), InputError);
  CHECK_THROWS_AS(apply_override(doc, "a..b=1"), InputError);
}

TEST_CASE("collective.servers and collective.group_size: integers, servers at most the workers, echoed when used") {
  const auto s = parse_scenario(
      json::parse(R"({"workers": 8, "collective": {"algorithm": "parameter-server", "servers": 3}})"), "");
  CHECK(s.collective.servers == 3);
  CHECK(scenario_to_json(s, 8, "star:8")["collective"]["servers"] == 3);
  const auto h = parse_scenario(json::parse(R"({"workers": 8, "collective": {"algorithm": "hierarchical", "group_size": 4}})"), "");
  CHECK(h.collective.group_size == 4);
  CHECK(scenario_to_json(h, 8, "star:8")["collective"]["group_size"] == 4);
  // the default server count is recorded for a parameter server, nothing for the ring
  const auto ps = parse_scenario(json::parse(R"({"collective": {"algorithm": "parameter-server"}})"), "");
  CHECK(scenario_to_json(ps, 8, "star:8")["collective"]["servers"] == 1);
  const json ring = scenario_to_json(parse_scenario(json::object(), ""), 8, "star:8")["collective"];
  CHECK_FALSE(ring.contains("servers"));
  CHECK_FALSE(ring.contains("group_size"));

  CHECK_THROWS_WITH_AS(parse_scenario(json::parse(R"({"workers": 8, "collective": {"algorithm": "parameter-server", "servers": 9}})"), ""),
                       doctest::Contains("collective.servers: 9 servers for 8 workers; allowed: 1 to 8"), InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(json::parse(R"({"collective": {"servers": 0}})"), ""),
                       doctest::Contains("collective.servers: 0 is out of range"), InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(json::parse(R"({"collective": {"group_size": 0}})"), ""),
                       doctest::Contains("collective.group_size: 0 is out of range"), InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(json::parse(R"({"collective": {"group_size": "four"}})"), ""),
                       doctest::Contains("collective.group_size: must be an integer"), InputError);
}

TEST_CASE("a setting the algorithm does not read is refused in one line, naming those that read it") {
  auto refused = [](const char* text) { return parse_scenario(json::parse(text), ""); };
  CHECK_THROWS_WITH_AS(refused(R"({"collective": {"algorithm": "ring", "root": 2}})"),
                       doctest::Contains("collective.root: ring allreduce does not read it (read by: naive allreduce"),
                       InputError);
  CHECK_THROWS_WITH_AS(refused(R"({"collective": {"algorithm": "ring", "segment": "64KiB"}})"),
                       doctest::Contains("collective.segment: ring allreduce does not read it"), InputError);
  CHECK_THROWS_WITH_AS(refused(R"({"collective": {"algorithm": "recursive-doubling", "channels": 2}})"),
                       doctest::Contains("read by: ring allreduce, hierarchical allreduce, ring reduce-scatter, ring allgather"),
                       InputError);
  CHECK_THROWS_WITH_AS(refused(R"({"collective": {"kind": "broadcast", "op": "max"}})"),
                       doctest::Contains("collective.op: broadcast reduces nothing"), InputError);
  CHECK_THROWS_WITH_AS(refused(R"({"collective": {"kind": "allgather", "reduce_bandwidth": "1GBps"}})"),
                       doctest::Contains("collective.reduce_bandwidth: allgather reduces nothing"), InputError);
  // the default value changes nothing and stays accepted (sweeps over algorithms set them)
  CHECK_NOTHROW(refused(R"({"collective": {"algorithm": "ring", "root": 0, "segment": "1MiB", "channels": 1}})"));
  // the groups turn the channels' rings: group_size is read by the ring on channels
  CHECK_NOTHROW(refused(R"({"workers": 8, "collective": {"algorithm": "ring", "channels": 2, "group_size": 4}})"));
  CHECK_THROWS_AS(refused(R"({"workers": 8, "collective": {"algorithm": "ring", "group_size": 4}})"), InputError);
  // channels for the ring reduce-scatter and allgather
  CHECK_NOTHROW(refused(R"({"collective": {"kind": "allgather", "algorithm": "ring", "channels": 4}})"));
  CHECK_NOTHROW(refused(R"({"collective": {"kind": "reduce-scatter", "algorithm": "ring", "channels": 4}})"));
}
