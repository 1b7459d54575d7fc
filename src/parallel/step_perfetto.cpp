#include "parallel/step_perfetto.hpp"

#include <fmt/format.h>
#include <map>

namespace collsim {

namespace {

constexpr const char* lanes[] = {"compute", "tensor", "pipeline", "expert", "data"};

int lane_id(const std::string& lane) {
  for (int i = 0; i < 5; ++i)
    if (lane == lanes[i]) return i + 1;
  return 6;
}

nlohmann::json metadata(const char* what, int pid, int tid, const std::string& name) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"ts", 0}, {"args", {{"name", name}}}};
}

}  // namespace

nlohmann::json step_perfetto(const StepResult& result, const std::string& name) {
  nlohmann::json events = nlohmann::json::array();
  std::map<int, std::map<int, bool>> named;  // rank -> lanes named
  for (const StepInterval& interval : result.intervals) {
    const int pid = interval.rank + 1, tid = lane_id(interval.lane);
    if (named[pid].empty()) events.push_back(metadata("process_name", pid, 0, fmt::format("rank {}", interval.rank)));
    if (!named[pid][tid]) {
      named[pid][tid] = true;
      events.push_back(metadata("thread_name", pid, tid, interval.lane));
    }
    nlohmann::json event{{"ph", "X"}, {"pid", pid}, {"tid", tid}, {"name", interval.what},
                         {"ts", interval.start * 1e6}, {"dur", (interval.end - interval.start) * 1e6}};
    if (interval.micro_batch >= 0) event["args"] = {{"micro_batch", interval.micro_batch}};
    events.push_back(std::move(event));
  }
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ns"},
          {"otherData", {{"scenario", name}, {"step_time", result.step_time}}}};
}

}  // namespace collsim
