// Sweep files: axes, ranges with units, zip groups, point order, validation.
#include <doctest/doctest.h>

#include "sweep/results.hpp"
#include "sweep/runner.hpp"
#include "sweep/sweep_spec.hpp"
#include "util/errors.hpp"

using namespace collsim;
using nlohmann::json;
using nlohmann::ordered_json;

TEST_CASE("a geometric range of sizes with units") {
  const auto values = expand_range(json::parse(R"({"from": "1KiB", "to": "1MiB", "times": 4})"), "axes.size");
  REQUIRE(values.size() == 6);
  CHECK(values[0] == 1024);
  CHECK(values[1] == 4096);
  CHECK(values[5] == 1048576);
}

TEST_CASE("a linear range, and ranges of times") {
  CHECK(expand_range(json::parse(R"({"from": 2, "to": 10, "step": 4})"), "f") == std::vector<json>{2, 6, 10});
  const auto times = expand_range(json::parse(R"({"from": "10ms", "to": "40ms", "times": 2})"), "f");
  REQUIRE(times.size() == 3);
  CHECK(times[2].get<double>() == doctest::Approx(0.04).scale(0));
  CHECK_THROWS_AS(expand_range(json::parse(R"({"from": 2, "to": 10})"), "f"), InputError);
  CHECK_THROWS_AS(expand_range(json::parse(R"({"from": "1KiB", "to": "1ms", "times": 2})"), "f"), InputError);
  CHECK_THROWS_WITH_AS(expand_range(json::parse(R"({"from": 1, "to": 4, "tims": 2})"), "axes.workers"),
                       doctest::Contains("axes.workers.tims: unknown key (did you mean 'times'?)"), InputError);
}

TEST_CASE("the cartesian product: the last axis varies fastest, zip groups vary together") {
  const Sweep sweep = parse_sweep(ordered_json::parse(R"({
      "base": {"collective": {"size": "4KiB"}},
      "axes": {"collective.algorithm": ["ring", "naive"], "workers": [2, 4, 8]},
      "zip": [{"topology": ["star:8", "star:16"], "seed": [1, 2]}]})"),
                                  "");
  CHECK(sweep.columns() == std::vector<std::string>{"collective.algorithm", "workers", "topology", "seed"});
  const auto points = expand_sweep(sweep);
  REQUIRE(points.size() == 12);
  CHECK(describe_point(points[0]) == "collective.algorithm=ring, workers=2, topology=star:8, seed=1");
  CHECK(describe_point(points[1]) == "collective.algorithm=ring, workers=2, topology=star:16, seed=2");
  CHECK(describe_point(points[11]) == "collective.algorithm=naive, workers=8, topology=star:16, seed=2");
  CHECK(points[5].scenario["workers"] == 8);
  CHECK(points[5].scenario["collective"]["size"] == "4KiB");
}

TEST_CASE("an invalid point is named with its axis values before anything runs") {
  const Sweep sweep = parse_sweep(ordered_json::parse(R"({"base": {}, "axes": {"workers": [2, 0]}})"), "");
  CHECK_THROWS_WITH_AS(expand_sweep(sweep), doctest::Contains("point 1 (workers=0): workers: 0 is out of range"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_sweep(ordered_json::parse(R"({"base": {}, "zip": [{"workers": [2, 4], "seed": [1]}]})"), ""),
                       doctest::Contains("zipped lists must have the same length"), InputError);
  CHECK_THROWS_WITH_AS(parse_sweep(ordered_json::parse(R"({"base": {}, "axis": {}})"), ""),
                       doctest::Contains("axis: unknown key (did you mean 'axes'?)"), InputError);
}

TEST_CASE("shards") {
  CHECK(parse_shard("2/4") == std::make_pair(2, 4));
  CHECK_THROWS_AS(parse_shard("5/4"), InputError);
  CHECK_THROWS_AS(parse_shard("0/4"), InputError);
  CHECK_THROWS_AS(parse_shard("2-4"), InputError);
}
