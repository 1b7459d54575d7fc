#include "viz/perfetto.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <tuple>

#include "util/errors.hpp"
#include "util/units.hpp"
#include "viz/svg.hpp"

using nlohmann::json;

namespace collsim::viz {
namespace {

constexpr int run_pid = 1;    // the run: ranks, rounds, recovery
constexpr int links_pid = 2;  // link counters

// Times go out in whole nanoseconds, written as microseconds: rounding every time the same
// way keeps nested slices nested.
int64_t to_ns(double seconds) { return std::llround(seconds * 1e9); }
double to_us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

struct Slice {
  int64_t start = 0, end = 0;
  std::string name, category;
  json args = json::object();
  int tid = 0;  // set when placed on a track
};

// One thread of the viewer: slices that must nest. Slices that would overlap without
// nesting go to extra tracks ("rank 3 (2)") rather than be cut.
struct Lane {
  std::string name;
  int sort = 0;
  std::vector<Slice> slices;
};

class Exporter {
public:
  explicit Exporter(const TraceView& trace) : t_(trace) {}

  json run() {
    check_expansion();
    json events = json::array();
    events.push_back(metadata("process_name", run_pid, 0, {{"name", "collsim: " + t_.name}}));
    events.push_back(metadata("process_sort_index", run_pid, 0, {{"sort_index", 0}}));

    // Lane 0: rounds; lane 1: recovery; then one lane per rank (or per phase, per-step).
    lanes_.push_back({"rounds", 0, {}});
    lanes_.push_back({"recovery", 1, {}});
    for (const auto& r : t_.rounds) {
      Slice round{to_ns(r.start), to_ns(r.end), fmt::format("round {}", r.round), "round", json::object()};
      round.args = {{"epoch", r.epoch}, {"group", r.group}, {"compute_s", r.compute}, {"collective_s", r.collective}};
      lanes_[0].slices.push_back(round);
    }
    add_recovery();
    const size_t first_rank_lane = lanes_.size();
    if (t_.per_step)
      add_steps();
    else
      add_ranks(first_rank_lane);
    add_activities();

    int next_tid = static_cast<int>(lanes_.size()) + 1;
    for (size_t lane = 0; lane < lanes_.size(); ++lane) place(lane, next_tid, events);
    if (!t_.per_step) add_flows(events);
    add_faults(events);
    add_link_counters(events);
    for (const auto& lane : lanes_)
      for (const auto& s : lane.slices) {
        json event{{"ph", "X"}, {"pid", run_pid}, {"tid", s.tid}, {"ts", to_us(s.start)},
                   {"dur", to_us(s.end - s.start)}, {"name", s.name}, {"cat", s.category}};
        if (!s.args.empty()) event["args"] = s.args;
        events.push_back(std::move(event));
      }

    json other{{"collsim_version", t_.version}, {"scenario", t_.name}, {"description", describe_run(t_)},
               {"messages_detail", t_.per_step ? "per-step" : "full"}, {"message_count", t_.message_count}};
    if (t_.per_step) other["note"] = describe_sample(t_);
    if (!t_.per_step && t_.messages.size() > perfetto_max_flows)
      other["note"] = fmt::format("message arrows left out: {} messages (written up to {})", t_.messages.size(),
                                  perfetto_max_flows);
    return json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}, {"otherData", other}};
  }

private:
  static json metadata(const char* what, int pid, int tid, json args) {
    return json{{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"ts", 0}, {"args", std::move(args)}};
  }

  void add_recovery() {
    for (const auto& r : t_.recovery) {
      const double from = r.fault_time.value_or(r.detected), to = std::max(r.rebuilt, r.resumed.value_or(r.rebuilt));
      Slice event{to_ns(from), to_ns(to), fmt::format("recovery epoch {}→{}", r.epoch_before, r.epoch_after), "recovery"};
      event.args = {{"round", r.round}, {"dropped_ranks", r.dropped_ranks}, {"joined_ranks", r.joined_ranks},
                    {"group", r.group}, {"reason", r.reason}};
      lanes_[1].slices.push_back(event);
      if (r.fault_time) lanes_[1].slices.push_back({to_ns(*r.fault_time), to_ns(r.detected), "detection", "recovery"});
      lanes_[1].slices.push_back({to_ns(r.detected), to_ns(r.rebuilt), "rebuild", "recovery"});
      if (r.resumed) lanes_[1].slices.push_back({to_ns(r.rebuilt), to_ns(*r.resumed), "resume", "recovery"});
    }
  }

  // Per rank: its rounds, computation, and per phase and per step the span of the messages
  // it sends or receives (args list them).
  void add_ranks(size_t first) {
    for (int rank = 0; rank < t_.workers; ++rank) {
      std::string name = fmt::format("rank {}", rank);
      if (static_cast<size_t>(rank) < t_.rank_hosts.size()) name += " (" + t_.rank_hosts[static_cast<size_t>(rank)] + ")";
      lanes_.push_back({name, 10 + 3 * rank, {}});
    }
    // parameter server processes: endpoints workers + s, one thread each after the ranks'
    for (size_t s = 0; s < t_.server_hosts.size(); ++s)
      lanes_.push_back({fmt::format("server {} ({})", s, t_.server_hosts[s]),
                        10 + 3 * (t_.workers + static_cast<int>(s)), {}});
    for (const auto& r : t_.rounds)
      for (int rank : r.group) {
        if (rank < 0 || rank >= t_.workers) continue;
        auto& slices = lanes_[first + static_cast<size_t>(rank)].slices;
        slices.push_back({to_ns(r.start), to_ns(r.end), fmt::format("round {}", r.round), "round"});
        if (r.compute > 0) slices.push_back({to_ns(r.start), to_ns(r.start + r.compute), "compute", "compute"});
      }
    using Key = std::tuple<int, int, int, int, int>;  // rank, round, epoch, phase, step (-1: the phase)
    std::map<Key, size_t> index;
    step_of_message_.assign(t_.messages.size(), {});
    auto span = [&](int rank, const TraceMessage& m, int step) -> std::pair<size_t, size_t> {
      const Key key{rank, m.round, m.epoch, m.phase, step};
      auto& slices = lanes_[first + static_cast<size_t>(rank)].slices;
      auto [it, added] = index.try_emplace(key, slices.size());
      if (added) {
        const std::string& phase = t_.phases[static_cast<size_t>(m.phase)];
        Slice slice{to_ns(m.start), to_ns(m.end), step < 0 ? phase : fmt::format("{} step {}", phase, step),
                    step < 0 ? "phase" : "step"};
        slice.args = {{"round", m.round}, {"epoch", m.epoch}};
        if (step >= 0) slice.args["step"] = step;
        slices.push_back(slice);
      } else {
        Slice& slice = slices[it->second];
        slice.start = std::min(slice.start, to_ns(m.start));
        slice.end = std::max(slice.end, to_ns(m.end));
      }
      return {first + static_cast<size_t>(rank), it->second};
    };
    auto add = [&](const TraceMessage& m) {
      span(m.src, m, -1);
      span(m.dst, m, -1);
      const auto sender = span(m.src, m, m.step);
      const auto receiver = span(m.dst, m, m.step);
      note(lanes_[sender.first].slices[sender.second], "sends",
           fmt::format("to {}: {}", endpoint_name(m.dst), format_size(m.bytes, 3)));
      note(lanes_[receiver.first].slices[receiver.second], "receives",
           fmt::format("from {}: {}", endpoint_name(m.src), format_size(m.bytes, 3)));
      return std::pair{sender, receiver};
    };
    for (size_t i = 0; i < t_.messages.size(); ++i) step_of_message_[i] = add(t_.messages[i]);
    for (const TraceMessage& m : t_.server_messages) add(m);
  }

  std::string endpoint_name(int endpoint) const {
    return endpoint < t_.workers ? fmt::format("rank {}", endpoint) : fmt::format("server {}", endpoint - t_.workers);
  }

  // Layered training: per rank a compute thread (each layer's forward and backward) and a
  // communication thread (each bucket's collective), sorted under the rank's own thread.
  void add_activities() {
    std::map<std::pair<int, bool>, size_t> lane_of;  // (rank, comm) -> lane
    for (const TraceActivity& a : t_.activities) {
      auto [it, added] = lane_of.try_emplace({a.rank, a.comm}, lanes_.size());
      if (added)
        lanes_.push_back({fmt::format("rank {} {}", a.rank, a.comm ? "comm" : "compute"), 10 + 3 * a.rank + (a.comm ? 2 : 1), {}});
      Slice slice{to_ns(a.start), to_ns(a.end),
                  fmt::format("{} {} {}", a.what, a.comm ? "bucket" : "layer", a.index), a.comm ? "bucket" : "layer"};
      slice.args = {{"round", a.round}, {"epoch", a.epoch}, {a.comm ? "bucket" : "layer", a.index}};
      if (a.comm && static_cast<size_t>(a.index) < t_.buckets.size()) {
        const TraceBucket& b = t_.buckets[static_cast<size_t>(a.index)];
        slice.args["layers"] = fmt::format("{}-{}", b.first_layer, b.last_layer);
        slice.args["bytes"] = b.bytes;
      }
      if (a.abandoned) slice.args["abandoned"] = true;
      lanes_[it->second].slices.push_back(std::move(slice));
    }
  }

  static void note(Slice& slice, const char* list, const std::string& text) {
    json& entries = slice.args[list];
    if (entries.is_null()) entries = json::array();
    if (entries.size() < 16) entries.push_back(text);
  }

  // A per-step trace has no ranks: one thread per phase, one slice per step.
  void add_steps() {
    std::map<int, size_t> lane_of_phase;
    for (const auto& m : t_.messages) {
      auto [it, added] = lane_of_phase.try_emplace(m.phase, lanes_.size());
      if (added) lanes_.push_back({t_.phases[static_cast<size_t>(m.phase)] + " (all ranks)", 10 + m.phase, {}});
      Slice slice{to_ns(m.start), to_ns(m.end), fmt::format("step {}", m.step), "step"};
      slice.args = {{"round", m.round}, {"epoch", m.epoch}, {"messages", m.count}, {"bytes", m.bytes}};
      lanes_[it->second].slices.push_back(slice);
    }
  }

  // Puts a lane's slices on tracks where they nest, and names the threads.
  void place(size_t lane_index, int& next_tid, json& events) {
    Lane& lane = lanes_[lane_index];
    std::vector<size_t> order(lane.slices.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const Slice &x = lane.slices[a], &y = lane.slices[b];
      return x.start != y.start ? x.start < y.start : x.end > y.end;
    });
    struct Track {
      int tid;
      std::vector<int64_t> open_ends;  // ends of the slices still open, innermost last
    };
    std::vector<Track> tracks{{static_cast<int>(lane_index) + 1, {}}};
    for (size_t i : order) {
      Slice& slice = lane.slices[i];
      Track* home = nullptr;
      for (Track& track : tracks) {
        while (!track.open_ends.empty() && track.open_ends.back() <= slice.start) track.open_ends.pop_back();
        if (track.open_ends.empty() || track.open_ends.back() >= slice.end) {
          home = &track;
          break;
        }
      }
      if (home == nullptr) {
        tracks.push_back({next_tid++, {}});
        home = &tracks.back();
      }
      home->open_ends.push_back(slice.end);
      slice.tid = home->tid;
    }
    for (size_t k = 0; k < tracks.size(); ++k) {
      const std::string name = k == 0 ? lane.name : fmt::format("{} ({})", lane.name, k + 1);
      events.push_back(metadata("thread_name", run_pid, tracks[k].tid, {{"name", name}}));
      events.push_back(metadata("thread_sort_index", run_pid, tracks[k].tid, {{"sort_index", lane.sort * 10 + static_cast<int>(k)}}));
    }
  }

  // A trace's events are bounded by what it holds: a small file that declares a million
  // ranks (each a track) must not become hundreds of MB.
  void check_expansion() const {
    double entries = static_cast<double>(t_.messages.size() + t_.server_messages.size() + t_.rounds.size() +
                                         t_.recovery.size() + t_.faults.size() + t_.activities.size());
    for (const auto& r : t_.rounds) entries += static_cast<double>(r.group.size());
    double events = 2.0 * t_.endpoints() + 3 * static_cast<double>(t_.messages.size() + t_.server_messages.size()) +
                    static_cast<double>(t_.activities.size());
    // the busiest links' counters, one event per bin (add_link_counters): a series' values
    // are numbers in a list, not entries (a 400k-bin series once made a 299 MB file)
    size_t counted_links = 0;
    for (const auto& link : t_.links)
      if (!link.series.empty() && counted_links++ < perfetto_link_counters)
        events += static_cast<double>(link.series.size()) + 1;
    for (const auto& r : t_.rounds) events += 3.0 * static_cast<double>(r.group.size());
    const double allowed = std::max(perfetto_min_event_budget, perfetto_events_per_entry * entries);
    if (events > allowed)
      throw InputError(fmt::format("--perfetto: '{}' would expand to about {:.3g} events ({} ranks, {:.0f} entries); "
                                   "at most {} per entry of the trace, or {:.0f}",
                                   t_.source, events, t_.workers, entries, perfetto_events_per_entry,
                                   perfetto_min_event_budget));
  }

  // One arrow per message, from the sender's step slice to the receiver's (the slices
  // enclosing the middle of the transfer): it leaves when the message starts and lands
  // when it ends, each clamped into its slice, so that the arrow has the message's length.
  void add_flows(json& events) {
    if (t_.messages.size() > perfetto_max_flows) return;
    for (size_t i = 0; i < t_.messages.size(); ++i) {
      const TraceMessage& m = t_.messages[i];
      const auto& [sender, receiver] = step_of_message_[i];
      const Slice& from = lanes_[sender.first].slices[sender.second];
      const Slice& to = lanes_[receiver.first].slices[receiver.second];
      const int64_t leaves = std::clamp(to_ns(m.start), from.start, from.end);
      const int64_t lands = std::clamp(to_ns(m.end), to.start, to.end);
      const json args{{"src", m.src}, {"dst", m.dst}, {"bytes", m.bytes}, {"start_s", m.start}, {"end_s", m.end}};
      events.push_back({{"ph", "s"}, {"id", i + 1}, {"pid", run_pid}, {"tid", from.tid}, {"ts", to_us(leaves)},
                        {"name", "message"}, {"cat", "message"}, {"args", args}});
      events.push_back({{"ph", "f"}, {"bp", "e"}, {"id", i + 1}, {"pid", run_pid}, {"tid", to.tid},
                        {"ts", to_us(std::max(lands, leaves))}, {"name", "message"}, {"cat", "message"}});
    }
  }

  void add_faults(json& events) const {
    for (const auto& f : t_.faults)
      events.push_back({{"ph", "i"}, {"s", "g"}, {"pid", run_pid}, {"tid", 1}, {"ts", to_us(to_ns(f.time))},
                        {"name", fmt::format("{} {}", f.kind, f.action)}, {"cat", "fault"},
                        {"args", {{"target", f.target}, {"fault", f.fault}, {"time_s", f.time}}}});
  }

  // Utilisation (percent of the link's initial bandwidth) of the busiest links, per bin.
  void add_link_counters(json& events) const {
    size_t written = 0;
    for (const auto& link : t_.links) {
      if (written == perfetto_link_counters) break;
      if (link.series.empty() || link.bandwidth <= 0 || t_.link_bin_width <= 0) continue;
      if (written++ == 0) {
        events.push_back(metadata("process_name", links_pid, 0, {{"name", "links (utilisation %)"}}));
        events.push_back(metadata("process_sort_index", links_pid, 0, {{"sort_index", 1}}));
      }
      for (size_t bin = 0; bin <= link.series.size(); ++bin) {
        const double value =
            bin < link.series.size() ? 100.0 * link.series[bin] / (link.bandwidth * t_.link_bin_width) : 0.0;
        events.push_back({{"ph", "C"}, {"pid", links_pid}, {"tid", 0},
                          {"ts", to_us(to_ns(static_cast<double>(bin) * t_.link_bin_width))}, {"name", link.name},
                          {"args", {{"utilisation", std::round(value * 10) / 10}}}});
      }
    }
  }

  const TraceView& t_;
  std::vector<Lane> lanes_;
  std::vector<std::pair<std::pair<size_t, size_t>, std::pair<size_t, size_t>>> step_of_message_;
};

}  // namespace

json perfetto_trace(const TraceView& trace) { return Exporter(trace).run(); }

}  // namespace collsim::viz
