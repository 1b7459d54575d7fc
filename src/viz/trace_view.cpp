#include "viz/trace_view.hpp"

#include <algorithm>
#include <climits>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "util/errors.hpp"
#include "util/input_file.hpp"
#include "util/units.hpp"
#include "viz/svg.hpp"

using nlohmann::json;

namespace collsim::viz {
namespace {

// What this collsim writes, and the older format it still reads (without message elements).
constexpr const char* current_format = "collsim-trace/2";
constexpr const char* older_format = "collsim-trace/1";

// Field access that names the field when it is missing or of the wrong type.
class Reader {
public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw InputError(fmt::format("{}: {}: {}", source_, path, what));
  }

  const json& field(const json& object, const char* key, const std::string& path) const {
    if (!object.is_object()) fail(path, "not an object");
    const auto it = object.find(key);
    if (it == object.end()) fail(join(path, key), "missing");
    return *it;
  }

  double number(const json& object, const char* key, const std::string& path) const {
    const json& value = field(object, key, path);
    if (!value.is_number()) fail(join(path, key), fmt::format("{} is not a number", value.dump()));
    return value.get<double>();
  }

  // A simulated time: 0 to a billion seconds (a message "ending" at -1 or starting at 1e20
  // made the pictures index bins and pixels they do not have).
  double time(const json& object, const char* key, const std::string& path) const {
    const double value = number(object, key, path);
    if (!(value >= 0 && value <= max_time))
      fail(join(path, key), fmt::format("{} is not a simulated time (0 to {} seconds)", value, max_time));
    return value;
  }

  // Bytes, bandwidths, latencies, busy times: 0 to 2^60.
  double quantity(const json& object, const char* key, const std::string& path) const {
    const double value = number(object, key, path);
    if (!(value >= 0 && value <= max_quantity))
      fail(join(path, key), fmt::format("{} is out of range (0 to 2^60)", value));
    return value;
  }

  std::optional<double> optional_time(const json& object, const char* key, const std::string& path) const {
    if (!object.contains(key) || object[key].is_null()) return std::nullopt;
    return time(object, key, path);
  }

  // Where an interval ends before it starts.
  void check_interval(double start, double end, const std::string& path) const {
    if (end < start) fail(path + ".end", fmt::format("{} is before its start {}", end, start));
  }

  static constexpr double max_time = 1e9;
  static constexpr double max_quantity = 1152921504606846976.0;  // 2^60

  int integer(const json& object, const char* key, const std::string& path) const {
    const json& value = field(object, key, path);
    if (!value.is_number_integer() || value.get<int64_t>() < INT_MIN || value.get<int64_t>() > INT_MAX ||
        (value.is_number_unsigned() && value.get<uint64_t>() > INT_MAX))
      fail(join(path, key), fmt::format("{} is not an integer of 32 bits", value.dump()));
    return value.get<int>();
  }

  uint64_t count(const json& object, const char* key, const std::string& path) const {
    const json& value = field(object, key, path);
    if (!value.is_number_integer() || value.get<int64_t>() < 0)
      fail(join(path, key), fmt::format("{} is not a count", value.dump()));
    return value.get<uint64_t>();
  }

  std::string text(const json& object, const char* key, const std::string& path) const {
    const json& value = field(object, key, path);
    if (!value.is_string()) fail(join(path, key), fmt::format("{} is not a string", value.dump()));
    return value.get<std::string>();
  }

  const json& array(const json& object, const char* key, const std::string& path) const {
    const json& value = field(object, key, path);
    if (!value.is_array()) fail(join(path, key), "not an array");
    return value;
  }

  std::vector<int> ranks(const json& object, const char* key, const std::string& path) const {
    std::vector<int> out;
    const std::string where = join(path, key);
    const json& values = array(object, key, path);
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i].is_number_integer()) fail(fmt::format("{}[{}]", where, i), "not a rank");
      out.push_back(values[i].get<int>());
    }
    return out;
  }

  static std::string join(const std::string& path, const char* key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }

private:
  std::string source_;
};

// Traces written before faults[].ranks existed name the ranks only in `target`'s ending:
// "host host-5 (rank 5)", "NIC of host h (ranks 2, 3)" -> {5}, {2, 3}.
std::vector<int> ranks_in_old_target(const std::string& target) {
  std::vector<int> ranks;
  const auto at = target.rfind(" (rank");
  if (at == std::string::npos || target.back() != ')') return ranks;
  std::istringstream list(target.substr(target.find(' ', at + 2) + 1));
  for (std::string item; std::getline(list, item, ',');) {
    try {
      ranks.push_back(std::stoi(item));
    } catch (const std::exception&) {
      return {};
    }
  }
  return ranks;
}

// Layered training: the buckets and every rank's compute and communication intervals
// (absent from traces without layers).
void read_activities(const Reader& read, const json& trace, TraceView& view) {
  if (trace.contains("buckets")) {
    const json& buckets = read.array(trace, "buckets", "");
    for (size_t i = 0; i < buckets.size(); ++i) {
      const std::string path = fmt::format("buckets[{}]", i);
      view.buckets.push_back({read.integer(buckets[i], "first_layer", path), read.integer(buckets[i], "last_layer", path),
                              read.quantity(buckets[i], "bytes", path)});
    }
  }
  if (!trace.contains("activities")) return;
  const json& activities = read.array(trace, "activities", "");
  for (size_t i = 0; i < activities.size(); ++i) {
    const std::string path = fmt::format("activities[{}]", i);
    const json& a = activities[i];
    TraceActivity activity;
    activity.rank = read.integer(a, "rank", path);
    if (activity.rank < 0 || activity.rank >= view.workers) read.fail(path + ".rank", "not a rank");
    activity.round = read.integer(a, "round", path);
    activity.epoch = read.integer(a, "epoch", path);
    const std::string lane = read.text(a, "lane", path);
    if (lane != "compute" && lane != "comm") read.fail(path + ".lane", fmt::format("'{}' is not \"compute\" or \"comm\"", lane));
    activity.comm = lane == "comm";
    activity.what = read.text(a, "what", path);
    activity.index = read.integer(a, activity.comm ? "bucket" : "layer", path);
    activity.start = read.time(a, "start", path);
    activity.end = read.time(a, "end", path);
    read.check_interval(activity.start, activity.end, path);
    activity.abandoned = a.contains("abandoned") && a["abandoned"].is_boolean() && a["abandoned"].get<bool>();
    view.activities.push_back(activity);
  }
}

std::string topology_label(const std::string& topology) {
  const auto at = topology.rfind("topologies/");
  if (at != std::string::npos) return topology.substr(at);
  const auto slash = topology.rfind('/');
  return slash == std::string::npos ? topology : topology.substr(slash + 1);
}

// messages_detail, messages (single ones or steps) and the size of the kept sample.
void read_messages(const Reader& read, const json& trace, TraceView& view) {
  const std::string detail = read.text(trace, "messages_detail", "");
  if (detail != "full" && detail != "per-step")
    read.fail("messages_detail", fmt::format("'{}' is not \"full\" or \"per-step\"", detail));
  view.per_step = detail == "per-step";
  const json& messages = read.array(trace, "messages", "");
  view.messages.reserve(messages.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    const std::string path = fmt::format("messages[{}]", i);
    TraceMessage message;
    if (!view.per_step) {
      message.src = read.integer(m, "src", path);
      message.dst = read.integer(m, "dst", path);
      if (message.src < 0 || message.src >= view.endpoints()) read.fail(path + ".src", "not a rank");
      if (message.dst < 0 || message.dst >= view.endpoints()) read.fail(path + ".dst", "not a rank");
    } else {
      message.count = read.count(m, "count", path);
    }
    message.bytes = read.quantity(m, "bytes", path);
    message.start = read.time(m, "start", path);
    message.end = read.time(m, "end", path);
    read.check_interval(message.start, message.end, path);
    message.step = read.integer(m, "step", path);
    message.epoch = read.integer(m, "epoch", path);
    message.round = read.integer(m, "round", path);
    const std::string phase = read.text(m, "phase", path);
    auto known = std::find(view.phases.begin(), view.phases.end(), phase);
    if (known == view.phases.end()) known = view.phases.insert(view.phases.end(), phase);
    message.phase = static_cast<int>(known - view.phases.begin());
    if (!view.per_step && view.format >= 2) {
      const json& elements = read.field(m, "elements", path);
      if (!elements.is_null()) {
        const auto whole = [](const json& v) { return v.is_number_integer() && v.get<int64_t>() >= 0; };
        if (!elements.is_array() || elements.size() != 2 || !whole(elements[0]) || !whole(elements[1]))
          read.fail(path + ".elements", fmt::format("{} is not null or [first, count]", elements.dump()));
        message.first = elements[0].get<int64_t>();
        message.elements = elements[1].get<uint64_t>();
      }
    }
    if (!view.per_step && !view.between_ranks(message.src, message.dst)) view.server_messages.push_back(message);
    else view.messages.push_back(message);
  }

  if (view.per_step && trace.contains("message_sample"))
    view.sample_kept = read.count(read.field(trace, "message_sample", ""), "kept", "message_sample");
}

// The format line: collsim-trace/2, or /1 (older traces, read with fewer facts).
int read_format(const Reader& read, const json& trace) {
  if (!trace.is_object()) read.fail("trace", "not a JSON object (is this a collsim trace?)");
  if (!trace.contains("format") || !trace["format"].is_string())
    read.fail("format", fmt::format("missing: not a collsim trace (expected \"format\": \"{}\")", current_format));
  if (trace["format"] != current_format && trace["format"] != older_format)
    read.fail("format", fmt::format("{} is not a format this collsim reads (expected \"{}\" or \"{}\")",
                                    trace["format"].dump(), current_format, older_format));
  return trace["format"] == older_format ? 1 : 2;
}

// The scenario as run: name, network, ranks and the collective's parameters.
void read_scenario(const Reader& read, const json& trace, TraceView& view) {
  const json& scenario = read.field(trace, "scenario", "");
  view.name = read.text(scenario, "name", "scenario");
  view.topology = read.text(scenario, "topology", "scenario");
  view.network = read.text(scenario, "network", "scenario");
  view.workers = read.integer(scenario, "workers", "scenario");
  if (view.workers < 1) read.fail("scenario.workers", "must be >= 1");
  const json& collective = read.field(scenario, "collective", "scenario");
  view.kind = read.text(collective, "kind", "scenario.collective");
  view.algorithm = read.text(collective, "algorithm", "scenario.collective");
  view.size = read.quantity(collective, "size", "scenario.collective");
  view.dtype = read.text(collective, "dtype", "scenario.collective");
  view.op = read.text(collective, "op", "scenario.collective");
  view.root = read.integer(collective, "root", "scenario.collective");
  view.segment = read.quantity(collective, "segment", "scenario.collective");
  if (scenario.contains("message_overhead") && scenario["message_overhead"].is_number())
    view.overhead = scenario["message_overhead"].get<double>();
}

// Which host runs each rank, and how many elements the collective carried (absent in old traces).
void read_platform(const Reader& read, const json& trace, TraceView& view) {
  const json& platform = read.field(trace, "platform", "");
  for (const auto& host : read.array(platform, "rank_hosts", "platform"))
    view.rank_hosts.push_back(host.is_string() ? host.get<std::string>() : "");
  if (trace.contains("payload"))
    view.carried_elements = read.count(read.field(trace, "payload", ""), "carried_elements", "payload");
  // parameter server processes (placement shared or dedicated): message endpoints after the ranks
  const json* parameters = &trace;
  for (const char* key : {"plan", "algorithm", "parameters", "parameter_server"}) {
    if (!parameters->is_object() || !parameters->contains(key)) return;
    parameters = &(*parameters)[key];
  }
  if (parameters->is_object() && parameters->contains("hosts") && (*parameters)["hosts"].is_array())
    for (const auto& host : (*parameters)["hosts"]) view.server_hosts.push_back(host.is_string() ? host.get<std::string>() : "");
}

// The summary is kept whole (metrics read it by name); the view needs a few figures of it.
void read_summary(const Reader& read, const json& trace, TraceView& view) {
  view.summary = read.field(trace, "summary", "");
  view.simulated_time = read.time(view.summary, "simulated_time", "summary");
  view.message_count = read.count(view.summary, "message_count", "summary");
  if (view.summary.contains("stalled") && view.summary["stalled"].is_string())
    view.stalled = view.summary["stalled"].get<std::string>();
}

void read_rounds(const Reader& read, const json& trace, TraceView& view) {
  const json& rounds = read.array(trace, "rounds", "");
  for (size_t i = 0; i < rounds.size(); ++i) {
    const std::string path = fmt::format("rounds[{}]", i);
    TraceRound round;
    round.round = read.integer(rounds[i], "round", path);
    round.epoch = read.integer(rounds[i], "epoch", path);
    round.group = read.ranks(rounds[i], "group", path);
    round.start = read.time(rounds[i], "start", path);
    round.end = read.time(rounds[i], "end", path);
    read.check_interval(round.start, round.end, path);
    round.compute = read.time(rounds[i], "compute", path);
    round.collective = read.time(rounds[i], "collective", path);
    view.rounds.push_back(round);
  }
}

// Faults with the ranks they struck; /1 traces name those ranks only inside `target`.
void read_faults(const Reader& read, const json& trace, TraceView& view) {
  const json& faults = read.array(trace, "faults", "");
  for (size_t i = 0; i < faults.size(); ++i) {
    const std::string path = fmt::format("faults[{}]", i);
    TraceFault fault;
    fault.fault = read.integer(faults[i], "fault", path);
    fault.kind = read.text(faults[i], "kind", path);
    fault.target = read.text(faults[i], "target", path);
    fault.action = read.text(faults[i], "action", path);
    fault.time = read.time(faults[i], "time", path);
    fault.ranks = faults[i].contains("ranks") ? read.ranks(faults[i], "ranks", path) : ranks_in_old_target(fault.target);
    view.faults.push_back(fault);
  }
}

void read_recovery(const Reader& read, const json& trace, TraceView& view) {
  const json& recovery = read.array(trace, "recovery", "");
  for (size_t i = 0; i < recovery.size(); ++i) {
    const std::string path = fmt::format("recovery[{}]", i);
    const json& r = recovery[i];
    TraceRecovery event;
    event.epoch_before = read.integer(r, "epoch_before", path);
    event.epoch_after = read.integer(r, "epoch_after", path);
    event.round = read.integer(r, "round", path);
    event.fault_time = read.optional_time(r, "fault_time", path);
    event.detected = read.time(r, "detected", path);
    event.rebuilt = read.time(r, "rebuilt", path);
    event.resumed = read.optional_time(r, "resumed", path);
    event.round_completed = read.optional_time(r, "round_completed", path);
    event.dropped_ranks = read.ranks(r, "dropped_ranks", path);
    event.group = read.ranks(r, "group", path);
    if (r.contains("joined_ranks")) event.joined_ranks = read.ranks(r, "joined_ranks", path);
    if (r.contains("reason") && r["reason"].is_string()) event.reason = r["reason"].get<std::string>();
    if (r.contains("kept_ranks")) event.kept_ranks = read.ranks(r, "kept_ranks", path);
    if (r.contains("undecided_ranks")) event.undecided_ranks = read.ranks(r, "undecided_ranks", path);
    if (r.contains("prediction") && r["prediction"].is_object())
      event.prediction = std::pair(read.quantity(r["prediction"], "keep", path + ".prediction"),
                                   read.quantity(r["prediction"], "drop", path + ".prediction"));
    view.recovery.push_back(event);
  }
}

TraceLink read_link(const Reader& read, const json& l, const std::string& path) {
  TraceLink link;
  link.name = read.text(l, "name", path);
  link.bandwidth = read.quantity(l, "bandwidth", path);
  link.latency = read.quantity(l, "latency", path);
  link.bytes = read.quantity(l, "bytes", path);
  link.flows = read.count(l, "flows", path);
  link.busy_time = read.time(l, "busy_time", path);
  link.peak_flows = read.integer(l, "peak_flows", path);
  link.peak_at = read.time(l, "peak_at", path);
  if (l.contains("series")) {
    const json& series = read.array(l, "series", path);
    for (size_t b = 0; b < series.size(); ++b) {
      if (!series[b].is_number() || !(series[b].get<double>() >= 0 && series[b].get<double>() <= Reader::max_quantity))
        read.fail(fmt::format("{}.series[{}]", path, b), "not a number from 0 to 2^60");
      link.series.push_back(series[b].get<double>());
    }
  }
  if (l.contains("bandwidth_changes"))
    for (const json& change : read.array(l, "bandwidth_changes", path))
      link.bandwidth_changes.emplace_back(read.time(change, "time", path + ".bandwidth_changes"),
                                          read.quantity(change, "bandwidth", path + ".bandwidth_changes"));
  return link;
}

// Traces written before collsim measured links have no "links": the report says so.
void read_links(const Reader& read, const json& trace, TraceView& view) {
  if (!trace.contains("links")) return;
  const json& links = trace["links"];
  view.has_links = true;
  view.link_bins = read.integer(links, "bins", "links");
  view.link_bin_width = read.time(links, "bin_width", "links");
  if (!(view.link_bin_width > 0)) read.fail("links.bin_width", "must be > 0");
  const json& list = read.array(links, "list", "links");
  for (size_t i = 0; i < list.size(); ++i) view.links.push_back(read_link(read, list[i], fmt::format("links.list[{}]", i)));
}

void read_notes(const json& trace, TraceView& view) {
  if (!trace.contains("notes") || !trace["notes"].is_array()) return;
  for (const auto& note : trace["notes"])
    if (note.is_string()) view.notes.push_back(note.get<std::string>());
}

}  // namespace

double TraceView::end_time() const {
  double end = simulated_time;
  for (const auto& m : messages) end = std::max(end, m.end);
  for (const auto& r : rounds) end = std::max(end, r.end);
  for (const auto& f : faults) end = std::max(end, f.time);
  for (const auto& r : recovery) {
    end = std::max({end, r.detected, r.rebuilt, r.resumed.value_or(0), r.round_completed.value_or(0)});
  }
  return end;
}

// Sections in the order of the trace, so that the first error reported is the first in the file.
TraceView read_trace(const json& trace, const std::string& source) {
  const Reader read(source);
  TraceView view;
  view.source = source;
  view.format = read_format(read, trace);
  view.version = read.text(trace, "collsim_version", "");
  read_scenario(read, trace, view);
  read_platform(read, trace, view);
  read_summary(read, trace, view);
  read_messages(read, trace, view);
  read_rounds(read, trace, view);
  read_faults(read, trace, view);
  read_recovery(read, trace, view);
  read_activities(read, trace, view);
  read_links(read, trace, view);
  read_notes(trace, view);
  return view;
}

std::string describe_run(const TraceView& trace) {
  return fmt::format("{} / {}, {} rank{}, {} per rank", trace.kind, trace.algorithm, trace.workers,
                     trace.workers == 1 ? "" : "s", format_size(trace.size, 3));
}

std::string describe_sample(const TraceView& trace) {
  std::string text = "the trace lists one entry per step";
  if (trace.sample_kept && *trace.sample_kept > 0)
    text += fmt::format(" and keeps the first {} of {} messages as a sample", thousands(*trace.sample_kept),
                        thousands(trace.message_count));
  return text + " (collsim run --messages all lists every message)";
}

std::string describe_outcome(const TraceView& trace) {
  std::string text = fmt::format("{}, {} network · simulated time {} · {} messages", topology_label(trace.topology),
                                 trace.network, short_time(trace.simulated_time), thousands(trace.message_count));
  if (trace.rounds.size() > 1) text += fmt::format(" · {} rounds", trace.rounds.size());
  if (trace.summary.contains("verified") && trace.summary["verified"].is_boolean())
    text += trace.summary["verified"].get<bool>() ? " · verified" : " · NOT verified";
  return text;
}

TraceView load_trace_file(const std::string& path) {
  return read_trace(parse_json(read_input_file(path, "trace file"), path), path);
}

}  // namespace collsim::viz
