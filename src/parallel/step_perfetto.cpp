#include "parallel/step_perfetto.hpp"

#include <fmt/format.h>

namespace collsim {

int LaneOrder::operator()(const std::string& lane) {
  return ids_.try_emplace(lane, static_cast<int>(ids_.size()) + 1).first->second;
}

namespace {

nlohmann::json metadata(const char* what, int pid, int tid, const std::string& name) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"ts", 0}, {"args", {{"name", name}}}};
}

}  // namespace

nlohmann::json step_perfetto(const std::vector<StepInterval>& intervals, const std::string& name, double step_time) {
  nlohmann::json events = nlohmann::json::array();
  std::map<int, std::map<int, bool>> named;  // rank -> lanes named
  LaneOrder lane_id;
  for (const StepInterval& interval : intervals) {
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
          {"otherData", {{"scenario", name}, {"step_time", step_time}}}};
}

}  // namespace collsim
