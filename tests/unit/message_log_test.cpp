// The message log's totals and bounded store, on hand-worked messages (no engine).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "comm/message_log.hpp"

using namespace collsim;

namespace {

// Remembers what the log tells an observer.
struct Seen : MessageObserver {
  std::vector<double> settled;
  void on_message(const MessageRecord&, double at) override { settled.push_back(at); }
};

MessageRecord message(int src, int dst, uint64_t bytes, double start, double end, const char* phase, int step) {
  return MessageRecord{src, dst, bytes, start, end, step, phase, 0, 0};
}

}  // namespace

TEST_SUITE("message log") {
  TEST_CASE("totals per step and per rank count every message, the store keeps the first ones") {
    MessageLog log;
    log.set_limit(2);
    const char* phase = "reduce-scatter";
    log.add(message(0, 1, 10, 0.0, 1.0, phase, 0), log.post(0.0), 1.0);
    log.add(message(1, 2, 10, 0.0, 1.5, phase, 0), log.post(0.0), 1.5);
    log.add(message(2, 0, 20, 1.0, 2.0, phase, 1), log.post(1.0), 2.0);
    log.add(message(0, 1, 30, 0.5, 3.0, "allgather", 0), log.post(0.5), 3.0);
    CHECK(log.count() == 4);
    CHECK(log.kept().size() == 2);
    CHECK_FALSE(log.kept_all());
    CHECK(log.kept()[1].dst == 2);

    const auto steps = log.steps();  // by first start: (rs 0) 0.0, (ag 0) 0.5, (rs 1) 1.0
    REQUIRE(steps.size() == 3);
    CHECK(std::string(steps[0].phase) == phase);
    CHECK(steps[0].count == 2);
    CHECK(steps[0].bytes == 20);
    CHECK(steps[0].end == 1.5);
    CHECK(std::string(steps[1].phase) == "allgather");
    CHECK(steps[2].step == 1);

    REQUIRE(log.ranks().size() == 3);
    CHECK(log.ranks()[0].sent == 2);
    CHECK(log.ranks()[0].bytes_sent == 40);
    CHECK(log.ranks()[0].received == 1);
    CHECK(log.ranks()[1].bytes_received == 40);
  }

  TEST_CASE("the same phase name from two string literals is one phase") {
    MessageLog log;
    const char first[] = "allgather";
    const char second[] = "allgather";
    log.add(message(0, 1, 1, 0, 1, first, 0), log.post(0), 1);
    log.add(message(1, 0, 1, 0, 1, second, 0), log.post(0), 1);
    REQUIRE(log.steps().size() == 1);
    CHECK(log.steps()[0].count == 2);
  }

  TEST_CASE("observers are told how far no later message can start") {
    MessageLog log;
    Seen seen;
    log.observe(&seen);
    const uint64_t early = log.post(1.0);  // still in flight until the end
    const uint64_t late = log.post(2.0);
    log.add(message(0, 1, 1, 2.0, 3.0, "p", 0), late, 3.0);
    log.add(message(1, 0, 1, 1.0, 4.0, "p", 0), early, 4.0);
    log.add(message(1, 0, 1, 4.0, 5.0, "p", 1), log.post(4.0), 5.0);
    // the message posted at 1.0 holds the first back; then nothing is in flight: the clock
    CHECK(seen.settled == std::vector<double>{1.0, 4.0, 5.0});
  }
}
