// The parallel layout in Megatron's rank order (src/parallel/layout.hpp), against groups
// worked out by hand for tensor 2 x data 4 x pipeline 2 with expert groups of 2, and the
// scenario's parallelism section's errors.
#include <doctest/doctest.h>

#include "parallel/layout.hpp"
#include "scenario/scenario.hpp"
#include "util/errors.hpp"

using namespace collsim;
using nlohmann::json;
using Groups = std::vector<std::vector<int>>;

namespace {

ParallelismSpec layout(int tensor, int pipeline, int data, int expert) {
  ParallelismSpec spec;
  spec.given = true;
  spec.tensor = tensor;
  spec.pipeline = pipeline;
  spec.data = data;
  spec.expert = expert;
  return spec;
}

}  // namespace

TEST_CASE("parallel layout, tensor 2 x data 4 x pipeline 2, expert 2: every dimension's groups by hand") {
  const ParallelismSpec spec = layout(2, 2, 4, 2);
  // world = t + 2 (d + 4 s)
  CHECK(dimension_groups(spec, Dimension::tensor) == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}});
  CHECK(dimension_groups(spec, Dimension::data) == Groups{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}});
  CHECK(dimension_groups(spec, Dimension::pipeline) == Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}});
  // blocks of 2 consecutive data indices: d in {0, 1} and {2, 3}
  CHECK(dimension_groups(spec, Dimension::expert) == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}});
  const LayoutCoordinates c = coordinates_of(spec, 13);  // 13 = 1 + 2 (2 + 4 x 1)
  CHECK(c.tensor == 1);
  CHECK(c.data == 2);
  CHECK(c.pipeline == 1);
  CHECK(c.expert == 0);
  for (int world = 0; world < 16; ++world) {
    const LayoutCoordinates w = coordinates_of(spec, world);
    CHECK(world_rank_of(spec, w.tensor, w.data, w.pipeline) == world);
  }
}

TEST_CASE("parallel layout, each dimension's groups partition the ranks") {
  for (const auto& [t, p, d, e] : std::vector<std::tuple<int, int, int, int>>{{1, 1, 8, 1}, {8, 4, 4, 4}, {3, 5, 6, 3}}) {
    const ParallelismSpec spec = layout(t, p, d, e);
    for (Dimension dimension : dimension_names().values()) {
      CAPTURE(dimension_names().name(dimension));
      std::vector<int> seen(static_cast<size_t>(spec.workers()), 0);
      for (const auto& group : dimension_groups(spec, dimension)) {
        CHECK(static_cast<int>(group.size()) == spec.size_of(dimension));
        for (int world : group) ++seen[static_cast<size_t>(world)];
      }
      CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    }
  }
}

TEST_CASE("parallelism section, the workers follow the layout and bad input is named") {
  const Scenario s = parse_scenario(json::parse(R"({"parallelism": {"tensor": 2, "data": 3,
      "collectives": [{"group": "tensor", "size": "1MiB"}]}})"), "");
  CHECK(*s.workers == 6);
  CHECK(s.topology == "star:6");
  CHECK(s.parallelism.collectives.front().algorithm == "ring");
  auto error_of = [](const char* text) {
    try {
      parse_scenario(json::parse(text), "");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of(R"({"workers": 4, "parallelism": {"tensor": 2, "data": 3, "collectives": [{"group": "data"}]}})")
            .find("workers: 4 given, but parallelism makes") != std::string::npos);
  CHECK(error_of(R"({"parallelism": {"data": 6, "expert": 4, "collectives": [{"group": "data"}]}})")
            .find("parallelism.expert: 4 does not divide parallelism.data 6") != std::string::npos);
  CHECK(error_of(R"({"parallelism": {"data": 2, "collectives": [{"group": "tensr"}]}})")
            .find("parallelism.collectives.0.group: unknown dimension 'tensr' (did you mean 'tensor'?)") != std::string::npos);
  CHECK(error_of(R"({"parallelism": {"data": 2, "collectives": [{"ranks": [[0, 2]]}]}})")
            .find("parallelism.collectives.0.ranks.0: rank 2 is not a worker; allowed: 0 to 1") != std::string::npos);
  CHECK(error_of(R"({"parallelism": {"data": 2}})").find("parallelism: give either collectives") != std::string::npos);
  CHECK(error_of(R"({"parallelism": {"tensor": 3, "step": {"model": "tiny", "efficiency": 0.5}}})")
            .find("parallelism.tensor: 3 does not divide the model's 8 heads") != std::string::npos);
  CHECK(error_of(R"({"parallelism": {"data": 2, "step": {"model": "tiny"}}})")
            .find("parallelism.step.efficiency: missing") != std::string::npos);
  CHECK(error_of(R"({"parallelism": {"data": 3, "step": {"model": "tiny", "efficiency": 0.5}}})")
            .find("parallelism.step.global_batch: 8 is not a multiple of micro_batch 1 x data 3") != std::string::npos);
  CHECK(error_of(R"({"parallelism": {"data": 2, "collectives": [{"group": "data"}]}, "training": {"rounds": 2}})")
            .find("training: not with parallelism yet") != std::string::npos);
}
