// The trace's single messages written straight to text against nlohmann's own dump of the
// same messages as JSON (the reference), and the whole trace file against build_trace's dump.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "run/summary.hpp"
#include "trace/message_text.hpp"
#include "trace/trace.hpp"

using namespace collsim;
using nlohmann::json;

namespace {

// Integral, tiny, huge and negative-zero times; a message from outside the buffer (elements
// null); a layered training bucket; a phase that JSON must escape.
std::vector<MessageRecord> varied_messages() {
  return {
      MessageRecord{0, 1, 1024, 0.0, 1.0, 0, "reduce-scatter", 0, 0, 0, 4},
      MessageRecord{3, 2, 0, 1e-6, 2.5e-6, 7, "allgather", 2, 5, -1, 0},
      MessageRecord{12, 40, 18446744073709551615ULL, 123456.789, 1.5e20, -1, "a \"quoted\"\tphase", 1, 3, 9000000000, 7, 4},
      MessageRecord{1, 0, 1, -0.0, 0.1, 3, "allgather", 0, 0, 8, 1},
  };
}

// The text nlohmann writes for `value` as the value of "m" nested `depth` - 1 objects deep
// (a key "z" follows it, so that its end can be found).
std::string nested_dump(const json& value, int depth) {
  json document = json{{"m", value}, {"z", 0}};
  for (int level = 1; level < depth; ++level) document = json{{"o", document}};
  const std::string text = document.dump(1);
  std::string after = ",\n";
  after.append(static_cast<size_t>(depth), ' ');
  after += "\"z\"";
  const size_t at = text.find("\"m\": ") + 5;
  return text.substr(at, text.find(after, at) - at);
}

// A run of 41 ranks whose store holds the varied messages, a sample of them when `limit`
// is smaller.
SimResult result_with_messages(uint64_t limit) {
  SimResult result;
  auto plan = std::make_shared<RunPlan>();
  plan->workers = 41;
  plan->choice.algorithm = &find_algorithm(Collective::allreduce, "ring", "collective.algorithm");
  result.plan = plan;
  result.messages.set_limit(limit);
  for (const auto& m : varied_messages()) result.messages.add(m, result.messages.post(m.start), m.end);
  return result;
}

}  // namespace

TEST_SUITE("trace text") {
  TEST_CASE("single messages are written as nlohmann writes them, at any depth") {
    const auto messages = varied_messages();
    for (int depth : {1, 2, 3}) {
      std::string text;
      append_single_messages(text, messages, depth);
      CHECK(text == nested_dump(single_messages_json(messages), depth));
    }
    std::string top;
    append_single_messages(top, messages, 0);
    CHECK(top == single_messages_json(messages).dump(1));
    std::string none;
    append_single_messages(none, {}, 2);
    CHECK(none == "[]");
  }

  TEST_CASE("the trace file is build_trace's dump, whether the store kept every message or a sample") {
    for (uint64_t limit : {100, 2}) {
      Scenario scenario;
      scenario.collective.algorithm = "ring";
      const SimResult result = result_with_messages(limit);
      const RunSummary summary;
      CAPTURE(limit);
      CHECK(trace_text(scenario, result, summary) == build_trace(scenario, result, summary).dump(1) + "\n");
    }
  }

  TEST_CASE("a string that holds the placeholder's text is left as it is") {
    Scenario scenario;
    scenario.collective.algorithm = "ring";
    const SimResult result = result_with_messages(2);
    const RunSummary summary;
    for (std::string name : {"\x01single messages\x01", "\"messages\": \"\x01single messages\x01\""}) {
      scenario.name = name;
      CAPTURE(name);
      CHECK(trace_text(scenario, result, summary) == build_trace(scenario, result, summary).dump(1) + "\n");
    }
  }
}
