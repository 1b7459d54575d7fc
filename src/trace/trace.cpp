#include <set>
#include "trace/trace.hpp"

#include "plan/plan_json.hpp"
#include "trace/message_text.hpp"

#include <algorithm>
#include <vector>

using nlohmann::json;

namespace collsim {

// Evidence against truth: the ranks the scenario's faults struck and that mattered (the
// culprits) against the ranks the coordinator dropped, and how long each event took to
// detect and rebuild.
json recovery_quality(const SimResult& result) {
  const RecoveryQuality q = recovery_quality_of(result);
  json events = json::array();
  for (const auto& r : result.recoveries) {
    if (!r.rebuilds()) continue;
    json event{{"epoch_after", r.epoch_after}, {"dropped", r.dropped_ranks}, {"rebuild_delay", r.rebuilt - r.detected}};
    if (r.fault_time >= 0) event["detection_delay"] = r.detected - r.fault_time;
    events.push_back(event);
  }
  return json{{"culprits", q.culprits},
              {"untouched", q.untouched},
              {"cut_off", q.cut_off},
              {"dropped", q.dropped},
              {"healthy_dropped", q.healthy_dropped},
              {"culprits_kept", q.culprits_kept},
              {"events", events}};
}
namespace {

// One entry per (round, epoch, phase, step): how many messages, how many bytes, first start,
// last end; listed in order of first start.
json messages_per_step(const MessageLog& log) {
  json messages = json::array();
  for (const auto& a : log.steps()) {
    messages.push_back({{"round", a.round}, {"epoch", a.epoch}, {"phase", a.phase}, {"step", a.step}, {"count", a.count},
                        {"bytes", a.bytes}, {"start", a.start}, {"end", a.end}});
    if (a.bucket >= 0) messages.back()["bucket"] = a.bucket;
  }
  return messages;
}

// What each world rank sent and received (docs/trace-format.md#ranks).
json ranks_section(const MessageLog& log, int workers) {
  json ranks = json::array();
  for (int r = 0; r < workers; ++r) {
    const RankTotals totals = static_cast<size_t>(r) < log.ranks().size() ? log.ranks()[static_cast<size_t>(r)] : RankTotals{};
    ranks.push_back({{"rank", r}, {"sent", totals.sent}, {"received", totals.received},
                     {"bytes_sent", totals.bytes_sent}, {"bytes_received", totals.bytes_received}});
  }
  return ranks;
}

// Per link: bytes, busy time, peak concurrent flows and bytes per time bin (docs/trace-format.md#links).
json links_section(const LinkUsage& usage) {
  json links = json::array();
  for (const auto& link : usage.links) {
    json entry{{"name", link.name},           {"bandwidth", link.bandwidth}, {"latency", link.latency},
               {"bytes", link.bytes},         {"flows", link.flows},         {"busy_time", link.busy_time},
               {"peak_flows", link.peak_flows}, {"peak_at", link.peak_at}};
    if (!link.series.empty()) entry["series"] = link.series;
    if (!link.bandwidth_changes.empty()) {
      entry["bandwidth_changes"] = json::array();
      for (const auto& change : link.bandwidth_changes)
        entry["bandwidth_changes"].push_back({{"time", change.time}, {"bandwidth", change.bandwidth}});
    }
    links.push_back(entry);
  }
  return json{{"bins", usage.bins}, {"bin_width", usage.bin_width}, {"list", links}};
}

// --algorithm auto: the choice and the table it was made from (null otherwise).
json auto_section(const SimResult& result) {
  if (result.plan->choice.candidates.empty()) return nullptr;
  const json candidates = candidates_json(result.plan->choice.candidates);
  return {{"chosen", result.plan->choice.algorithm->name}, {"by", result.plan->choice.by}, {"candidates", candidates}};
}

// rounds[]: each completed round, with its comm and exposed_comm under layered training.
json rounds_section(const SimResult& result) {
  json rounds = json::array();
  for (const auto& r : result.rounds) {
    json round{{"round", r.round}, {"epoch", r.epoch}, {"group", r.group}, {"start", r.start}, {"end", r.end},
               {"compute", std::max(0.0, r.compute_end - r.start)},
               {"collective", std::max(0.0, r.end - r.collective_start)},
               {"models_identical", r.models_identical}};
    if (r.loss) round["loss"] = *r.loss;
    if (result.plan->training.bucket_count() > 0) {
      round["comm"] = r.comm;
      round["exposed_comm"] = std::max(0.0, r.end - r.compute_end);
    }
    rounds.push_back(round);
  }
  return rounds;
}

// Layered training: which layers each bucket holds, and when backward makes it ready.
json buckets_section(const Scenario& scenario, const SimResult& result) {
  json buckets = json::array();
  const double bytes_per_parameter = static_cast<double>(dtype_size(scenario.collective.dtype));
  const std::vector<BucketSlice>& slices = result.plan->training.buckets;
  for (size_t b = 0; b < slices.size(); ++b) {
    const Bucket& bucket = slices[b].bucket;
    buckets.push_back({{"bucket", b}, {"first_layer", bucket.first}, {"last_layer", bucket.last},
                       {"parameters", bucket.parameters},
                       {"bytes", static_cast<double>(bucket.parameters) * bytes_per_parameter},
                       {"ready", bucket.ready}});
  }
  return buckets;
}

// Layered training: every rank's intervals on its compute lane (each layer's forward and
// backward) and its communication lane (each bucket's collective), as facts to draw.
// Asynchronous parameter servers: every push a server applied, in the order applied, with
// its staleness (and its bucket, with training buckets).
json updates_section(const SimResult& result) {
  json updates = json::array();
  for (const ServerUpdate& u : result.updates) {
    json update{{"server", u.server},
                {"worker", u.worker},
                {"round", u.round},
                {"version", u.version},
                {"read_version", u.read_version},
                {"staleness", u.staleness},
                {"reply_version", u.reply_version},
                {"time", u.time}};
    if (u.bucket >= 0) update["bucket"] = u.bucket;
    updates.push_back(std::move(update));
  }
  return updates;
}

json activities_section(const SimResult& result) {
  json activities = json::array();
  for (const Activity& a : result.activities) {
    const bool compute = a.lane == Activity::Lane::compute;
    json entry{{"rank", a.rank},   {"round", a.round}, {"epoch", a.epoch}, {"lane", compute ? "compute" : "comm"},
               {"what", a.what},   {compute ? "layer" : "bucket", a.index}, {"start", a.start}, {"end", a.end}};
    if (a.abandoned) entry["abandoned"] = true;
    if (a.replayed) entry["replayed"] = true;
    activities.push_back(std::move(entry));
  }
  return activities;
}

// faults[]: what the injectors did, the struck host, links and ranks as data.
json faults_section(const SimResult& result) {
  json faults = json::array();
  for (const auto& f : result.faults) {
    json fault{{"fault", f.fault}, {"kind", f.kind},   {"target", f.target},
               {"action", f.action}, {"time", f.time}, {"ranks", f.ranks}};
    if (!f.host.empty()) fault["host"] = f.host;
    if (!f.links.empty()) fault["links"] = f.links;
    if (f.kind == "link-down" && f.action == "applied") fault["cut_off"] = f.cut_off;
    if (f.action == "applied") fault["touched"] = f.touched;
    faults.push_back(std::move(fault));
  }
  return faults;
}

// The placeholder a list of single messages takes in the document that trace_text dumps:
// a string no trace holds (nlohmann writes the control characters as \u0001).
constexpr const char* single_messages_placeholder = "\x01single messages\x01";
constexpr const char* dumped_placeholder = "\"\\u0001single messages\\u0001\"";

// A decision's prices in useful work: each choice it weighed, and the one taken.
json prices_json(const DecisionPrices& prices) {
  json choices = json::array();
  for (const DecisionPrice& c : prices.choices)
    choices.push_back(json{{"choice", c.choice}, {"seconds", c.seconds}, {"workers", c.workers},
                           {"samples_per_second", c.samples_per_second}});
  return json{{"rounds_left", prices.rounds_left}, {"batch", prices.batch}, {"chosen", prices.chosen},
              {"choices", choices}};
}

// recovery[]: each of the coordinator's decisions.
json recovery_section(const SimResult& result) {
  json recovery = json::array();
  for (const auto& r : result.recoveries) {
    json event{{"epoch_before", r.epoch_before}, {"epoch_after", r.epoch_after}, {"round", r.round},
               {"detected", r.detected}, {"rebuilt", r.rebuilt}, {"dropped_ranks", r.dropped_ranks},
               {"dropped_hosts", r.dropped_hosts}, {"joined_ranks", r.joined_ranks}, {"group", r.group},
               {"reason", r.reason}};
    // Times that did not happen are left out rather than given a sentinel value.
    if (r.fault_time >= 0) event["fault_time"] = r.fault_time;
    if (r.resumed >= 0) event["resumed"] = r.resumed;
    if (r.round_completed >= 0) event["round_completed"] = r.round_completed;
    if (!r.rule.empty()) event["rule"] = r.rule;
    if (!r.evidence.empty()) event["evidence"] = r.evidence;
    if (!r.kept_ranks.empty()) event["kept_ranks"] = r.kept_ranks;
    if (!r.undecided_ranks.empty()) event["undecided_ranks"] = r.undecided_ranks;
    if (!r.postponed_ranks.empty()) event["postponed_ranks"] = r.postponed_ranks;
    if (r.bucket >= 0) event["bucket"] = r.bucket;
    if (r.stopped) event["stopped"] = true;
    if (!r.lost_servers.empty()) {
      event["lost_servers"] = r.lost_servers;
      event["servers"] = r.servers;
    }
    if (r.prediction_keep >= 0)
      event["prediction"] = json{{"keep", r.prediction_keep}, {"drop", r.prediction_drop}};
    if (!r.prices.empty()) event["prices"] = prices_json(r.prices);
    if (!r.scores.empty()) {
      json ranks = json::array();
      for (const auto& [rank, score] : r.scores) ranks.push_back(json{{"rank", rank}, {"score", score}});
      event["scores"] = json{{"median", r.score_median}, {"ranks", ranks}};
    }
    recovery.push_back(event);
  }
  return recovery;
}

// summary: the run's figures.
json summary_section(const SimResult& result, const RunSummary& s) {
  const auto& v = s.verification;
  json summary{{"simulated_time", s.simulated_time},
               {"collective_time", s.collective_time},
               {"model_time", s.model_time},
               {"lower_bound", s.bound.value()},
               {"lower_bound_bandwidth", s.bound.bandwidth_term},
               {"lower_bound_latency", s.bound.latency_term},
               {"efficiency", s.efficiency},
               {"topology_bound", s.topology_bound},
               {"topology_efficiency", s.topology_efficiency},
               {"algbw", s.algbw},
               {"busbw", s.busbw},
               {"verified", v.verified},
               {"max_error", v.max_error},
               {"wrong_elements", v.wrong_elements},
               {"tolerance", v.tolerance},
               {"bitwise_identical", v.bitwise_identical},
               {"message_count", s.message_count},
               {"rounds_completed", result.rounds_completed},
               {"models_identical", result.models_identical},
               {"final_group", result.final_group}};
  if (result.plan->topology_bound.time > 0)
    summary["topology_cut"] = json{{"cut", result.plan->topology_bound.cut},
                                   {"bytes", result.plan->topology_bound.bytes},
                                   {"capacity", result.plan->topology_bound.capacity},
                                   {"time", result.plan->topology_bound.time},
                                   {"bottleneck_links", result.plan->topology_bound.bottleneck_links}};
  if (!result.faults.empty() || !result.recoveries.empty())
    summary["healthy_dropped"] = recovery_quality_of(result).healthy_dropped.size();
  if (result.plan->scenario.training.has_layers() || result.plan->scenario.training.rounds > 1) {
    summary["replayed_collectives"] = result.replayed;
    if (!result.replay_off.empty()) summary["replay_off"] = result.replay_off;
  }
  if (s.iterations) {
    const IterationFigures& it = *s.iterations;
    summary["iteration_time"] = it.iteration_time;
    summary["compute_time"] = it.compute_time;
    summary["comm_time"] = it.comm_time;
    summary["exposed_comm"] = it.exposed_comm;
    summary["overlap_fraction"] = it.overlap_fraction;
    summary["buckets"] = it.buckets;
    if (it.samples_per_second) summary["samples_per_second"] = *it.samples_per_second;
    if (it.memory_per_worker) summary["memory_per_worker"] = *it.memory_per_worker;
    summary["iteration_p50"] = it.iteration_p50;
    summary["iteration_p99"] = it.iteration_p99;
    if (it.scaling_efficiency) summary["scaling_efficiency"] = *it.scaling_efficiency;
  }
  if (!result.stall.empty()) summary["stalled"] = result.stall;
  if (result.timeout >= 0) {
    summary["timeout"] = result.timeout;
    summary["recovery_quality"] = recovery_quality(result);
  }
  if (s.baseline && result.stall.empty()) {
    summary["baseline_time"] = s.baseline->simulated_time;
    summary["time_lost"] = s.time_lost;
  }
  return summary;
}

// platform: the hosts and links, and the alpha and B read from its routes.
json platform_section(const RunPlan& plan) {
  return {{"source", plan.platform.source},
          {"kind", plan.platform.kind},
          {"hosts", plan.platform.hosts.size()},
          {"links", plan.platform.link_count},
          {"rank_hosts", plan.rank_hosts},
          {"alpha", plan.model.alpha},
          {"bandwidth", plan.model.bandwidth},
          {"injection_bandwidth", plan.model.injection_bandwidth},
          {"min_alpha", std::max(0.0, plan.model.min_alpha)}};
}

json payload_section(const Payload& payload) {
  return {{"logical_bytes", static_cast<uint64_t>(payload.logical_bytes)},
          {"logical_elements", payload.logical_elems},
          {"carried_elements", payload.carried_elems},
          {"bytes_per_element", payload.bytes_per_elem}};
}

// The trace, its single messages as JSON (`inline_messages`) or as placeholders.
json trace_document(const Scenario& scenario, const SimResult& result, const RunSummary& s, bool inline_messages) {
  const MessageLog& log = result.messages;
  const bool full = log.kept_all();
  json trace{
      {"format", trace_format},
      {"collsim_version", COLLSIM_VERSION},
      {"scenario", scenario_to_json(scenario, result.plan->workers, result.plan->platform.source)},
      {"platform", platform_section(*result.plan)},
      {"payload", payload_section(result.plan->payload)},
      {"summary", summary_section(result, s)},
      {"rounds", rounds_section(result)},
      {"messages_detail", full ? "full" : "per-step"},
      {"messages", !full ? messages_per_step(log) : inline_messages ? single_messages_json(log.kept()) : single_messages_placeholder},
      {"ranks", ranks_section(log, result.plan->workers)},
      {"faults", faults_section(result)},
      {"recovery", recovery_section(result)},
      {"links", links_section(result.link_usage)},
      {"notes", result.plan->notes},
      {"auto", auto_section(result)},
      {"plan", plan_json(*result.plan)},
  };
  if (result.plan->model.deployment.asynchronous) trace["updates"] = updates_section(result);
  if (!result.plan->training.buckets.empty()) {
    trace["buckets"] = buckets_section(scenario, result);
    trace["activities"] = activities_section(result);
  }
  // The single messages the store kept when it could not keep them all (--messages).
  if (!full)
    trace["message_sample"] = {{"kept", log.kept().size()}, {"of", log.count()}, {"which", "first"},
                               {"messages", inline_messages ? single_messages_json(log.kept()) : single_messages_placeholder}};
  return trace;
}

}  // namespace

json build_trace(const Scenario& scenario, const SimResult& result, const RunSummary& summary) {
  return trace_document(scenario, result, summary, true);
}

// The document is dumped with its lists of single messages left as placeholders, and each
// placeholder is replaced by the list written straight to text, at the depth of its key.
// A placeholder is sought as the value of a "messages" key: a string value that happened
// to hold the same text (a scenario's name) is dumped with its quotes escaped, so it can
// not match.
std::string trace_text(const Scenario& scenario, const SimResult& result, const RunSummary& summary) {
  const std::string document = trace_document(scenario, result, summary, false).dump(1);
  const std::string key = "\"messages\": ";
  const std::string placeholder = key + dumped_placeholder;
  std::string text;
  size_t copied = 0;
  for (size_t at = document.find(placeholder); at != std::string::npos; at = document.find(placeholder, copied)) {
    const size_t line = document.rfind('\n', at) + 1;
    const auto depth = static_cast<int>(document.find_first_not_of(' ', line) - line);
    text.append(document, copied, at + key.size() - copied);
    append_single_messages(text, result.messages.kept(), depth);
    copied = at + placeholder.size();
  }
  text.append(document, copied, std::string::npos);
  return text + "\n";
}

}  // namespace collsim
