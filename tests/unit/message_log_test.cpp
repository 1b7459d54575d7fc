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
  std::vector<double> replayed_shifts;
  void on_message(const MessageRecord&, double at) override { settled.push_back(at); }
  std::unique_ptr<ObservedCapture> end_capture(double, double) override { return std::make_unique<ObservedCapture>(); }
  void replay(const ObservedCapture&, double shift, double) override { replayed_shifts.push_back(shift); }
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

  TEST_CASE("a captured collective replayed later adds its totals moved in time, and the store its first messages") {
    MessageLog log;
    Seen seen;
    log.observe(&seen);
    log.set_limit(5);
    const char* phase = "reduce-scatter";
    log.add(message(0, 1, 7, 0.0, 0.5, phase, 0), log.post(0.0), 0.5);  // before: not captured
    log.begin_capture(1.0);
    MessageRecord a = message(0, 1, 10, 1.0, 2.0, phase, 0), b = message(1, 0, 20, 1.0, 2.5, phase, 0);
    MessageRecord c = message(1, 0, 30, 2.5, 3.0, phase, 1);
    for (MessageRecord* m : {&a, &b, &c}) {
      m->round = 0;
      m->bucket = 3;
      m->first = 100;
    }
    log.add(a, log.post(1.0), 2.0);
    log.add(b, log.post(1.0), 2.5);
    log.add(c, log.post(2.5), 3.0);
    const LogCapture captured = log.end_capture(3.0);
    CHECK(captured.alone);
    CHECK(captured.count == 3);
    CHECK(captured.head.size() == 3);
    REQUIRE(captured.steps.size() == 2);
    REQUIRE(captured.ranks.size() == 2);
    CHECK(captured.ranks[0].sent == 1);  // the message before the capture is not its own
    CHECK(captured.ranks[0].bytes_received == 50);

    // bucket 4 of round 1, 10 s later, 8 elements further: its first message still fits the store
    log.replay(captured, {10.0, 1, 4, 8, true}, 11.0);
    CHECK(log.count() == 7);
    REQUIRE(log.kept().size() == 5);
    CHECK(log.kept()[4].start == 11.0);
    CHECK(log.kept()[4].end == 12.0);
    CHECK(log.kept()[4].bucket == 4);
    CHECK(log.kept()[4].round == 1);
    CHECK(log.kept()[4].first == 108);
    CHECK(log.ranks()[0].sent == 3);
    CHECK(log.ranks()[1].bytes_sent == 100);
    const auto steps = log.steps();
    REQUIRE(steps.size() == 5);
    CHECK(steps[3].bucket == 4);  // step 0 of the replay: 2 messages, 30 bytes, 11.0 to 12.5
    CHECK(steps[3].count == 2);
    CHECK(steps[3].bytes == 30);
    CHECK(steps[3].start == 11.0);
    CHECK(steps[3].end == 12.5);
    CHECK(steps[4].start == 12.5);
    CHECK(steps[4].end == 13.0);
    CHECK(seen.replayed_shifts == std::vector<double>{10.0});
  }

  TEST_CASE("a capture with a message in flight at its end, or one in an earlier step, is not alone") {
    MessageLog log;
    log.begin_capture(0.0);
    const uint64_t open = log.post(0.0);
    CHECK_FALSE(log.end_capture(1.0).alone);
    log.add(message(0, 1, 1, 0.0, 2.0, "p", 0), open, 2.0);
    log.begin_capture(2.0);
    log.add(message(1, 0, 1, 2.0, 3.0, "p", 0), log.post(2.0), 3.0);  // the step made before it began
    CHECK_FALSE(log.end_capture(3.0).alone);
  }
}
