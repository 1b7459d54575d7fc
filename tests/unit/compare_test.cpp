// collsim compare on hand-made inputs: the cases a CI job meets.
#include <doctest/doctest.h>

#include "report/compare.hpp"
#include "util/errors.hpp"

using namespace collsim;

namespace {
std::vector<MetricSet> one(const std::string& id, double time, double busbw = 10e9) {
  return {{id, "hand-made", {{"simulated_time", time}, {"busbw", busbw}, {"verified", 1}}}};
}
Change change_of(const std::vector<Comparison>& rows, const std::string& metric) {
  for (const auto& row : rows)
    if (row.metric == metric) return row.change;
  FAIL("no row for " << metric);
  return Change::unchanged;
}
}  // namespace

TEST_CASE("identical inputs: nothing changes, exit 0") {
  const auto rows = compare_metric_sets(one("a", 1.0), one("a", 1.0), {});
  CHECK(change_of(rows, "simulated_time") == Change::unchanged);
  CHECK(comparison_exit_status(rows) == 0);
}

TEST_CASE("a slowdown just above the tolerance is a regression, just below is not") {
  CompareOptions options;  // 0.5%
  CHECK(change_of(compare_metric_sets(one("a", 1.0), one("a", 1.0051), options), "simulated_time") == Change::regression);
  CHECK(change_of(compare_metric_sets(one("a", 1.0), one("a", 1.0049), options), "simulated_time") == Change::unchanged);
  CHECK(comparison_exit_status(compare_metric_sets(one("a", 1.0), one("a", 1.0051), options)) == 1);
}

TEST_CASE("faster or more bandwidth is an improvement, exit 0") {
  const auto rows = compare_metric_sets(one("a", 1.0, 10e9), one("a", 0.9, 11e9), {});
  CHECK(change_of(rows, "simulated_time") == Change::improvement);
  CHECK(change_of(rows, "busbw") == Change::improvement);
  CHECK(comparison_exit_status(rows) == 0);
}

TEST_CASE("a failed verification is a regression") {
  auto current = one("a", 1.0);
  current[0].metrics["verified"] = 0;
  CHECK(change_of(compare_metric_sets(one("a", 1.0), current, {}), "verified") == Change::regression);
}

TEST_CASE("strict: any change fails, improvements included") {
  const auto rows = compare_metric_sets(one("a", 1.0), one("a", 0.9), {});
  CHECK(comparison_exit_status(rows) == 0);
  CHECK(comparison_exit_status(rows, true) == 1);
  CHECK(comparison_exit_status(compare_metric_sets(one("a", 1.0), one("a", 1.0), {}), true) == 0);
}

TEST_CASE("missing entries fail, new entries do not") {
  const auto missing = compare_metric_sets(one("a", 1.0), {}, {});
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].change == Change::missing);
  CHECK(comparison_exit_status(missing) == 1);
  const auto added = compare_metric_sets({}, one("b", 1.0), {});
  REQUIRE(added.size() == 1);
  CHECK(added[0].change == Change::added);
  CHECK(comparison_exit_status(added) == 0);
}

TEST_CASE("per-metric tolerance overrides the default") {
  CompareOptions options;
  parse_tolerance("0.5%", options);
  parse_tolerance("simulated_time=2%", options);
  CHECK(options.tolerance == doctest::Approx(0.005).scale(0));
  CHECK(options.per_metric.at("simulated_time") == doctest::Approx(0.02).scale(0));
  CHECK(change_of(compare_metric_sets(one("a", 1.0), one("a", 1.015), options), "simulated_time") == Change::unchanged);
  CHECK(change_of(compare_metric_sets(one("a", 1.0, 10e9), one("a", 1.0, 9.9e9), options), "busbw") ==
        Change::regression);
  CHECK_THROWS_AS(parse_tolerance("simulated_tme=1%", options), InputError);
  CHECK_THROWS_AS(parse_tolerance("-1%", options), InputError);
}

TEST_CASE("the markdown table a CI job posts") {
  const auto rows = compare_metric_sets(one("quickstart", 0.010), one("quickstart", 0.011), {});
  const std::string markdown = format_comparison(rows, "markdown");
  CHECK(markdown.find("| status | entry | metric | baseline | current | change |") == 0);
  CHECK(markdown.find("| regression | quickstart | simulated_time | 10 ms | 11 ms | +10.000% |") != std::string::npos);
  CHECK(markdown.find("1 regression(s), 0 improvement(s), 0 missing, 0 new; 1 entries compared") != std::string::npos);
}
