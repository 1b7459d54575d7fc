#include <doctest/doctest.h>

#include <fmt/format.h>
#include <numeric>

#include "sim/link_usage.hpp"
#include "util/errors.hpp"
#include "viz/palette.hpp"
#include "viz/step_through.hpp"
#include "util/units.hpp"
#include "viz/svg.hpp"
#include "viz/timeline_svg.hpp"
#include "viz/trace_view.hpp"

using namespace collsim;
using namespace collsim::viz;

namespace {

// A trace document with the fields the pictures read, and the messages given.
nlohmann::json trace_of(const std::string& kind, const std::string& algorithm, int p, double size,
                        const nlohmann::json& messages) {
  nlohmann::json hosts = nlohmann::json::array();
  for (int r = 0; r < p; ++r) hosts.push_back(fmt::format("host-{}", r));
  return {{"format", "collsim-trace/2"},
          {"collsim_version", "0.1.0"},
          {"scenario",
           {{"name", "test"}, {"topology", "star:4"}, {"network", "ideal"}, {"workers", p},
            {"collective",
             {{"kind", kind}, {"algorithm", algorithm}, {"size", size}, {"dtype", "float32"}, {"op", "sum"},
              {"root", 0}, {"segment", 1024}}}}},
          {"platform", {{"rank_hosts", hosts}}},
          {"payload", {{"carried_elements", static_cast<uint64_t>(size / 4)}}},
          {"summary", {{"simulated_time", 1.0}, {"message_count", messages.size()}}},
          {"messages_detail", "full"},
          {"messages", messages},
          {"rounds", nlohmann::json::array()},
          {"faults", nlohmann::json::array()},
          {"recovery", nlohmann::json::array()}};
}

// A message of float32 elements [first, first + bytes / 4) of the vector.
nlohmann::json message(int src, int dst, double bytes, double start, double end, int step, const char* phase,
                       uint64_t first = 0) {
  return {{"src", src}, {"dst", dst}, {"bytes", bytes}, {"start", start}, {"end", end},
          {"step", step}, {"phase", phase}, {"epoch", 0}, {"round", 0},
          {"elements", {first, static_cast<uint64_t>(bytes / 4)}}};
}

// The messages of a ring allreduce (Patarasuk & Yuan): at reduce-scatter step s rank r sends
// chunk (r - s) mod p, at allgather step s chunk (r + 1 - s) mod p; chunks of n/p bytes.
nlohmann::json ring_messages(int p, double size) {
  nlohmann::json messages = nlohmann::json::array();
  const auto chunk_first = [&](int c) { return static_cast<uint64_t>(((c % p) + p) % p * size / p / 4); };
  int s = 0;
  for (const int shift : {0, 1})
    for (int step = 0; step < p - 1; ++step, ++s)
      for (int r = 0; r < p; ++r)
        messages.push_back(message(r, (r + 1) % p, size / p, s, s + 1, step, shift ? "allgather" : "reduce-scatter",
                                   chunk_first(r - step + shift)));
  return messages;
}

}  // namespace

TEST_CASE("the phases whose messages the receiver reduces, and their fixed colours") {
  for (const char* phase : {"reduce-scatter", "reduce", "inter-reduce-scatter", "push"}) CHECK(phase_reduces(phase));
  for (const char* phase : {"allgather", "broadcast", "inter-allgather", "pull", "fold"}) CHECK_FALSE(phase_reduces(phase));
  // a parameter server's push looks like a reduce, its pull like a broadcast
  const Palette palette({"reduce", "push", "broadcast", "pull"});
  CHECK(palette.color(1) == palette.color(0));
  CHECK(palette.color(3) == palette.color(2));
}

TEST_CASE("nice ticks are round numbers inside the range") {
  CHECK(nice_ticks(0, 11.77e-3, 10) == std::vector<double>{0, 2e-3, 4e-3, 6e-3, 8e-3, 10e-3});
  CHECK(nice_ticks(0, 1, 5).size() == 6);
  CHECK(tick_label(2.5e-6, time_unit_for(10e-6), 0.5e-6) == "2.5");
  CHECK(tick_label(4e-3, time_unit_for(11e-3), 2e-3) == "4");
}

TEST_CASE("times, sizes and counts for people") {
  CHECK(short_time(11.7721e-3) == "11.8 ms");
  CHECK(short_time(2.1024e-6) == "2.1 µs");
  CHECK(format_size(8 << 20, 3) == "8 MiB");
  CHECK(thousands(2095104) == "2,095,104");
  CHECK(num(12.5) == "12.5");
  CHECK(num(3.0) == "3");
  CHECK(esc("a<b & \"c\"") == "a&lt;b &amp; &quot;c&quot;");
}

TEST_CASE("a transfer's bytes are spread over the bins it covers") {
  std::vector<double> series(4, 0.0);
  spread_over_bins(series, 1.0, 0.5, 2.5, 100);
  CHECK(series == std::vector<double>{25, 50, 25, 0});
  spread_over_bins(series, 1.0, 3.2, 3.2, 10);  // no duration: whole in its bin
  CHECK(series[3] == 10);
  spread_over_bins(series, 1.0, 3.5, 4.5, 10);  // past the end: the last bin takes it
  CHECK(std::accumulate(series.begin(), series.end(), 0.0) == doctest::Approx(120).scale(0));
}

TEST_CASE("a trace that is not one is refused, naming the field") {
  CHECK_THROWS_AS(read_trace(nlohmann::json::array(), "x.json"), InputError);
  CHECK_THROWS_WITH_AS(read_trace({{"format", "collsim-trace/9"}}, "x.json"),
                       doctest::Contains("x.json: format"), InputError);
  auto broken = trace_of("allreduce", "ring", 4, 4096, ring_messages(4, 4096));
  broken["messages"][3].erase("start");
  CHECK_THROWS_WITH_AS(read_trace(broken, "x.json"), "x.json: messages[3].start: missing", InputError);
  broken = trace_of("allreduce", "ring", 4, 4096, ring_messages(4, 4096));
  broken["messages"][0]["dst"] = 9;
  CHECK_THROWS_WITH_AS(read_trace(broken, "x.json"), "x.json: messages[0].dst: not a rank", InputError);
}

TEST_CASE("ring allreduce step by step: partial sums grow, then final chunks travel") {
  for (int p : {2, 3, 4, 8}) {
    CAPTURE(p);
    const TraceView view = read_trace(trace_of("allreduce", "ring", p, 4096.0 * p, ring_messages(p, 4096.0 * p)), "t");
    const StepThrough steps = derive_step_through(view);
    REQUIRE(steps.available);
    REQUIRE(steps.chunk_model);
    CHECK(steps.chunks == p);
    REQUIRE(steps.frames.size() == static_cast<size_t>(2 * (p - 1) + 1));
    // Before: each rank holds its own contribution to every chunk.
    for (const auto& rank : steps.frames.front().holds)
      for (int held : rank) CHECK(held == 1);
    // Step s of the reduce-scatter: rank r sends chunk (r - s) mod p.
    const auto& first = steps.frames[1];
    // labels count from 1 within the phase: p-1 steps of reduce-scatter, then p-1 of allgather
    CHECK(first.label == fmt::format("reduce-scatter step 1 of {}", p - 1));
    CHECK(steps.frames.back().label == fmt::format("allgather step {0} of {0}", p - 1));
    for (const auto& m : first.messages) CHECK(m.chunks == std::vector<int>{m.src});
    // After the reduce-scatter rank r holds chunk (r + 1) mod p final.
    const auto& scattered = steps.frames[static_cast<size_t>(p - 1)].holds;
    for (int r = 0; r < p; ++r) CHECK(scattered[static_cast<size_t>(r)][static_cast<size_t>((r + 1) % p)] == p);
    // At the end every rank holds every chunk, final.
    for (const auto& rank : steps.frames.back().holds)
      for (int held : rank) CHECK(held == p);
  }
}

TEST_CASE("binomial broadcast step by step: the holders double") {
  // p = 8, root 0: 0->4, then 0->2 and 4->6, then 0->1, 2->3, 4->5, 6->7.
  const double n = 1 << 20;
  nlohmann::json messages = {message(0, 4, n, 0, 1, 0, "broadcast"), message(0, 2, n, 1, 2, 1, "broadcast"),
                             message(4, 6, n, 1, 2, 1, "broadcast"), message(0, 1, n, 2, 3, 2, "broadcast"),
                             message(2, 3, n, 2, 3, 2, "broadcast"), message(4, 5, n, 2, 3, 2, "broadcast"),
                             message(6, 7, n, 2, 3, 2, "broadcast")};
  const TraceView view = read_trace(trace_of("broadcast", "binomial", 8, n, messages), "t");
  const StepThrough steps = derive_step_through(view);
  REQUIRE(steps.chunk_model);
  CHECK(steps.model == "whole vector");
  CHECK(steps.chunks == 1);
  std::vector<int> holders;
  for (const auto& frame : steps.frames) {
    int count = 0;
    for (const auto& rank : frame.holds) count += rank[0] == 8;
    holders.push_back(count);
  }
  CHECK(holders == std::vector<int>{1, 2, 4, 8});
}

TEST_CASE("recursive halving step by step: halves of the vector, then quarters") {
  // p = 4, distance 2 then 1: each rank sends the receiver's half, then the receiver's chunk
  // (elements: 1024 floats, chunks of 256).
  const double n = 4096, half = n / 2, quarter = n / 4;
  nlohmann::json messages = {
      message(0, 2, half, 0, 1, 0, "reduce-scatter", 512),    message(1, 3, half, 0, 1, 0, "reduce-scatter", 512),
      message(2, 0, half, 0, 1, 0, "reduce-scatter", 0),      message(3, 1, half, 0, 1, 0, "reduce-scatter", 0),
      message(0, 1, quarter, 1, 2, 1, "reduce-scatter", 256), message(1, 0, quarter, 1, 2, 1, "reduce-scatter", 0),
      message(2, 3, quarter, 1, 2, 1, "reduce-scatter", 768), message(3, 2, quarter, 1, 2, 1, "reduce-scatter", 512)};
  const StepThrough steps =
      derive_step_through(read_trace(trace_of("reduce-scatter", "recursive-halving", 4, n, messages), "t"));
  REQUIRE(steps.chunk_model);
  CHECK(steps.chunks == 4);
  CHECK(steps.frames[1].messages[0].chunks == std::vector<int>{2, 3});  // 0 -> 2: rank 2's half
  CHECK(steps.frames[1].messages[0].label == "c2–3");
  CHECK(steps.frames[2].messages[0].chunks == std::vector<int>{1});     // 0 -> 1: rank 1's chunk
  for (int r = 0; r < 4; ++r) CHECK(steps.frames.back().holds[static_cast<size_t>(r)][static_cast<size_t>(r)] == 4);
}

TEST_CASE("a replay that does not reach the result shows the messages only") {
  // Both ranks exchange the first half only: the second half never gets reduced.
  const double n = 4096;
  nlohmann::json messages = {message(0, 1, n / 2, 0, 1, 0, "exchange"), message(1, 0, n / 2, 0, 1, 0, "exchange")};
  const StepThrough steps = derive_step_through(read_trace(trace_of("allreduce", "halving", 2, n, messages), "t"));
  CHECK(steps.available);
  CHECK_FALSE(steps.chunk_model);
  CHECK(steps.note.find("does not end in the collective's result") != std::string::npos);
  CHECK(steps.frames.size() == 2);
  CHECK(steps.frames[1].messages.size() == 2);
  CHECK(steps.frames[1].holds.empty());
}

TEST_CASE("a collsim-trace/1 trace is read, and its step-through says it cannot show chunks") {
  auto old = trace_of("allreduce", "ring", 4, 4096, ring_messages(4, 4096));
  old["format"] = "collsim-trace/1";
  for (auto& m : old["messages"]) m.erase("elements");
  const StepThrough steps = derive_step_through(read_trace(old, "t"));
  CHECK(steps.available);
  CHECK_FALSE(steps.chunk_model);
  CHECK(steps.note.find("collsim-trace/1") != std::string::npos);
  auto broken = trace_of("allreduce", "ring", 4, 4096, ring_messages(4, 4096));
  broken["messages"][2]["elements"] = {1};
  CHECK_THROWS_WITH_AS(read_trace(broken, "x.json"), doctest::Contains("x.json: messages[2].elements"), InputError);
}

TEST_CASE("the step-through is for small runs with every message") {
  auto many = trace_of("allreduce", "ring", 32, 32 * 4096.0, ring_messages(32, 32 * 4096.0));
  CHECK_FALSE(derive_step_through(read_trace(many, "t")).available);
  auto per_step = trace_of("allreduce", "ring", 4, 4096, nlohmann::json::array());
  per_step["messages_detail"] = "per-step";
  CHECK(derive_step_through(read_trace(per_step, "t")).why_not.find("--messages all") != std::string::npos);
}

TEST_CASE("a preempted host that runs several workers: every one of them is drawn absent") {
  auto count_absences = [](const nlohmann::json& fault) {
    nlohmann::json trace = trace_of("allreduce", "ring", 4, 1024, ring_messages(4, 1024));
    trace["faults"].push_back(fault);
    const std::string svg = timeline_svg(read_trace(trace, "test"));
    size_t count = 0;
    for (size_t at = svg.find("class=\"dropped\""); at != std::string::npos; at = svg.find("class=\"dropped\"", at + 1))
      ++count;
    return count;
  };
  nlohmann::json preempt{{"fault", 0}, {"kind", "preempt"}, {"action", "applied"}, {"time", 2.0}};
  SUBCASE("the ranks as data: the text is for people and not read") {
    preempt["target"] = "the big node";
    preempt["host"] = "node-1";
    preempt["ranks"] = {1, 2};
    CHECK(count_absences(preempt) == 2);
  }
  SUBCASE("a trace written before faults[].ranks: the ranks at the end of target") {
    preempt["target"] = "host node-1 (ranks 1, 2)";
    CHECK(count_absences(preempt) == 2);
    preempt["target"] = "host host-3 (rank 3)";
    CHECK(count_absences(preempt) == 1);
  }
  SUBCASE("a link between switches strikes no rank") {
    preempt["kind"] = "slow-link";
    preempt["target"] = "link spine";
    preempt["ranks"] = nlohmann::json::array();
    CHECK(count_absences(preempt) == 0);
  }
}
