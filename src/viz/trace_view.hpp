#pragma once
// A JSON trace (collsim-trace/2, or an older collsim-trace/1; docs/trace-format.md) read into plain structs for the
// pictures: the SVG timeline, the HTML report and the Perfetto export all start here,
// both for `collsim render TRACE.json` and for `collsim run --svg/--html/--perfetto`.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace collsim::viz {

// One message (messages_detail "full", count 1), or one step of all ranks ("per-step":
// src and dst are -1 and count says how many messages).
struct TraceMessage {
  int src = -1, dst = -1;
  double bytes = 0;
  double start = 0, end = 0;
  int step = 0;
  int phase = 0;  // index into TraceView::phases
  int epoch = 0, round = 0;
  uint64_t count = 1;
  // The elements it carried, in the sender's collective buffer (collsim-trace/2 `elements`):
  // first < 0 when the trace does not say (a /1 trace, or a message sent from elsewhere).
  int64_t first = -1;
  uint64_t elements = 0;
};

struct TraceRound {
  int round = 0, epoch = 0;
  std::vector<int> group;
  double start = 0, end = 0, compute = 0, collective = 0;
};

struct TraceFault {
  int fault = 0;
  std::string kind, target, action;
  double time = 0;
  std::vector<int> ranks;  // every rank on the host struck (none for a link between switches)
};

struct TraceRecovery {
  int epoch_before = 0, epoch_after = 0, round = 0;
  std::optional<double> fault_time, resumed, round_completed;
  double detected = 0, rebuilt = 0;
  std::vector<int> dropped_ranks, joined_ranks, group;
  std::vector<int> kept_ranks, undecided_ranks;  // a straggler kept; ranks no evidence told apart
  std::string reason;
  std::optional<std::pair<double, double>> prediction;  // the rounds left: (keep, drop)

  // As RecoveryEvent::rebuilds(): ranks dropped, or the same members redoing the collective.
  bool rebuilds() const { return !dropped_ranks.empty() || (epoch_after > epoch_before && joined_ranks.empty()); }
};

// Layered training (docs/trace-format.md#activities): one interval of a rank's compute lane
// (a layer's forward or backward) or communication lane (a bucket's collective).
struct TraceActivity {
  int rank = 0, round = 0, epoch = 0;
  bool comm = false;       // lane "comm" (else "compute")
  std::string what;        // "forward", "backward", or the collective
  int index = 0;           // the layer, or the bucket
  double start = 0, end = 0;
  bool abandoned = false;
};

struct TraceBucket {
  int first_layer = 0, last_layer = 0;
  double bytes = 0;
};

struct TraceLink {
  std::string name;
  double bandwidth = 0, latency = 0, bytes = 0, busy_time = 0, peak_at = 0;
  uint64_t flows = 0;
  int peak_flows = 0;
  std::vector<double> series;
  std::vector<std::pair<double, double>> bandwidth_changes;  // (time, bytes/s)
};

struct TraceView {
  std::string source;  // file name, for messages
  int format = 2;      // the N of collsim-trace/N
  std::string name, kind, algorithm, topology, network, dtype, op, version;
  int workers = 0, root = 0;
  double size = 0, segment = 0;
  double overhead = 0;  // scenario.message_overhead: what a sender pays before each message leaves
  uint64_t carried_elements = 0;  // payload.carried_elements: the elements messages' `elements` index
  std::vector<std::string> rank_hosts;
  // The hosts of the parameter server processes (plan.algorithm.parameters.parameter_server.hosts):
  // server s is message endpoint workers + s. Empty without them.
  std::vector<std::string> server_hosts;
  int endpoints() const { return workers + static_cast<int>(server_hosts.size()); }
  bool between_ranks(int src, int dst) const { return src < workers && dst < workers; }
  double simulated_time = 0;
  uint64_t message_count = 0;
  bool per_step = false;
  // per-step traces: how many single messages the run kept as a sample (message_sample), if said
  std::optional<uint64_t> sample_kept;
  std::vector<std::string> phases;  // in order of first appearance
  std::vector<TraceMessage> messages;  // between ranks (full), or per step (per-step: servers' too)
  // full: the messages to and from parameter server processes (endpoints from workers on);
  // the rank lanes of the timeline and the step-through leave them out, Perfetto draws them
  std::vector<TraceMessage> server_messages;
  std::vector<TraceRound> rounds;
  std::vector<TraceFault> faults;
  std::vector<TraceRecovery> recovery;
  std::vector<TraceBucket> buckets;        // layered training, in backward order
  std::vector<TraceActivity> activities;  // layered training, by rank
  bool has_links = false;
  int link_bins = 0;
  double link_bin_width = 0;
  std::vector<TraceLink> links;
  std::vector<std::string> notes;
  std::string stalled;  // summary.stalled, or ""
  nlohmann::json summary;  // as written, for tables

  // The end of everything drawn: the run, the last message, round and recovery event.
  double end_time() const;
};

// What the header of every picture says about the run: "allreduce / ring, 8 ranks, 64 MiB per rank".
std::string describe_run(const TraceView& trace);
// "topologies/star-8.xml, ideal network · simulated time 11.8 ms · 112 messages · verified"
std::string describe_outcome(const TraceView& trace);

// What a per-step trace says of single messages, for notes in the pictures: "the trace lists
// one entry per step and keeps the first 20,000 of 2,095,104 messages as a sample
// (collsim run --messages all lists every message)".
std::string describe_sample(const TraceView& trace);

// Reads a trace document; a missing or mistyped field is an InputError naming it
// ("out.json: messages[3].start: missing").
TraceView read_trace(const nlohmann::json& trace, const std::string& source);

// Reads a trace file: InputError when it cannot be read, is not JSON or not a trace.
TraceView load_trace_file(const std::string& path);

}  // namespace collsim::viz
