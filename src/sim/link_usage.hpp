#pragma once
// Which links the messages of a run crossed, how busy each one was, and when: bytes,
// busy time, peak concurrent flows and bytes per time bin. Followed as each message is
// recorded (a MessageObserver of the message log), from its route in the run's route
// cache (model/route_cache.hpp, the one reader of SimGrid's routes), in memory that grows with the links,
// not with the messages; it only reads what the simulation did, so it cannot change its
// timings. Bandwidth changes (slow-link faults) come from Link::on_bandwidth_change_cb.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "comm/message_log.hpp"
#include "model/route_cache.hpp"

namespace simgrid::s4u {
class Host;
class Link;
}  // namespace simgrid::s4u

namespace collsim {

struct BandwidthChange {
  double time = 0;
  double bandwidth = 0;  // bytes/s from then on
};

struct LinkUsageRecord {
  std::string name;
  double bandwidth = 0;             // bytes/s when the run started
  double latency = 0;               // seconds, when the run started
  uint64_t bytes = 0;               // bytes of the messages that crossed the link
  size_t flows = 0;                 // messages that crossed it
  double busy_time = 0;             // seconds with at least one message on it
  int peak_flows = 0;               // most messages on it at once
  double peak_at = 0;               // first time it carried peak_flows messages
  std::vector<double> series;       // bytes per time bin (only for the busiest links)
  std::vector<BandwidthChange> bandwidth_changes;
  // Watched links only (LinkUsageRecorder::watch): when messages were on it, as
  // [start, end] spans (overlapping messages merged). Not in the trace: it says whether a
  // fault on the link touched any transfer (sim/fault_effects.hpp).
  std::vector<std::pair<double, double>> spans;
};

struct LinkUsage {
  int bins = 0;                     // series cover [0, bins * bin_width]
  double bin_width = 0;             // seconds
  std::vector<LinkUsageRecord> links;  // links that carried a message or changed bandwidth, busiest first
};

// How many links get a series (the busiest).
constexpr size_t link_series_max_links = 64;
// The series are added up as messages arrive, in this many bins of a width that doubles
// (merging bins pairwise) whenever the run outgrows them: 128 to 256 bins in the end.
constexpr int streamed_series_bins = 256;

class LinkUsageRecorder : public MessageObserver {
public:
  // Before engine->run(): remembers each link's bandwidth and latency, follows changes,
  // and observes the messages of `log`, whose ranks are the endpoints of `routes`.
  void start(std::shared_ptr<const RouteCache> routes, MessageLog& log);
  // Before the first message: also keep when messages were on these links (the links of
  // slow-link faults), for LinkUsageRecord::spans.
  void watch(const std::vector<const simgrid::s4u::Link*>& links);
  void on_message(const MessageRecord& message, double settled) override;
  void on_abandoned(int src, int dst, double start, double end) override;
  // One collective alone on the network (MessageLog::begin_capture): each link's bytes,
  // flows, busy time, peak and series of its messages, to replay them later.
  void begin_capture(double now, double settled) override;
  std::unique_ptr<ObservedCapture> end_capture(double now, double settled) override;
  void replay(const ObservedCapture& captured, double shift, double settled) override;
  // After the run: the usage of every link, for a run of `duration` simulated seconds.
  LinkUsage finish(double duration);

private:
  struct Edge {
    double time;
    int delta;  // +1 a message starts, -1 one ends
  };
  // One link as the messages use it. Its messages' start and end edges wait in `pending`
  // until no message still to come can start before them, then are swept in time order.
  // Laid out as two cache lines, what every message of the link touches in the first
  // (a link's record is read and written twice per message of a ring step).
  struct alignas(64) Traffic {
    explicit Traffic(const simgrid::s4u::Link* crossed) : link(crossed) {}
    uint64_t bytes = 0;
    uint64_t flows = 0;
    // In sweep order (they arrive nearly sorted) from `swept` on: a vector whose swept
    // front is dropped once it is most of it, so that a link's edges cost no allocation
    // once it has room for the handful in flight (a deque allocated a block every 32).
    std::vector<Edge> pending;
    uint32_t swept = 0;
    int active = 0;
    int peak_flows = 0;
    int series_level = 0;
    double busy_since = 0;
    // second line
    double busy_time = 0;
    double peak_at = 0;
    std::vector<double> series;  // streamed_series_bins bins of 2^series_level x series_unit
    std::vector<std::pair<double, double>>* spans = nullptr;  // a watched link's, in spans_
    const simgrid::s4u::Link* link;

    void add(Edge edge);
    void sweep(double before);
  };
  static_assert(sizeof(Traffic) == 128, "a link's record is two cache lines");

  Traffic& traffic_of(int link);
  Traffic& traffic_of(const simgrid::s4u::Link* link);
  void grow_series_to(double time);
  void catch_up(Traffic& traffic) const;
  void sweep_all(double before);

  // Messages wait here, in the order recorded, until batch_messages of them (or an abandoned
  // transfer, a capture's start or end, a replay, or the end) have come; then each link
  // follows its messages of the batch together, in that order. Each link's figures depend
  // only on its own messages (and the series level each was recorded at), so they are the
  // same; but a link's record, edges and series bin are fetched once for a run of its
  // messages, not once per message (a ring step visits every link before any comes again:
  // at p = 256 each message found its links' records out of cache).
  struct Followed {
    double start, end, settled, from;
    uint64_t bytes;
    int level;  // the series level when the message was recorded
  };
  struct Hop {
    uint32_t traffic;  // index into traffic_
    uint32_t message;  // index into batch_
  };
  static constexpr size_t batch_messages = 4096;
  // The bins' width at a level, and its inverse: the width is a power of two, so that
  // multiplying by the inverse is dividing by it, exactly.
  struct SeriesBins {
    SeriesBins() = default;
    explicit SeriesBins(int at);
    int level = -1;
    double width = 0, per_width = 0;
  };
  void follow(Traffic& traffic, const Followed& message, const SeriesBins& bins);
  void flush();
  std::vector<Followed> batch_;
  std::vector<Hop> hops_, sorted_hops_;
  std::vector<uint32_t> hop_starts_;  // by traffic index, during a flush

  // A capture under way: the links' figures when it began, and each link's bytes in time
  // bins from the capture's start (as the run's series, doubling their width as it grows).
  struct Before {
    uint64_t bytes = 0, flows = 0;
    double busy_time = 0, peak_at = 0;
    int peak_flows = 0;
  };
  struct CaptureState {
    double start = 0;
    int level = 0;
    std::vector<Before> before;                // by traffic index, the links there at its start
    std::vector<std::vector<double>> series;   // by traffic index (empty: no message yet)
    std::vector<int> levels;                   // of each series
    void spread(size_t traffic, double from, double to, double bytes);
  };
  std::unique_ptr<CaptureState> capture_;

  // Bandwidth changes seen during the run, by link in the order they first changed. The
  // engine's signal cannot be disconnected and the engine outlives the run: the callback
  // holds this weakly and ignores changes once the recorder is gone.
  struct BandwidthChanges {
    std::unordered_map<const simgrid::s4u::Link*, size_t> index;
    std::vector<std::pair<const simgrid::s4u::Link*, std::vector<BandwidthChange>>> by_link;
  };
  std::shared_ptr<BandwidthChanges> changes_ = std::make_shared<BandwidthChanges>();
  // The watched links (watch): when transfers were on them, delivered or abandoned.
  std::unordered_map<const simgrid::s4u::Link*, std::vector<std::pair<double, double>>> spans_;
  std::shared_ptr<const RouteCache> routes_;
  std::vector<Traffic> traffic_;
  std::unordered_map<const simgrid::s4u::Link*, uint32_t> traffic_index_;
  std::vector<int> traffic_of_link_;  // by route cache link id: index into traffic_, -1 before its first message
  // A sender's last route with the records of its links: a ring rank's next message takes
  // it again and then reads nothing else to find them (no route table, no link table).
  // Routes longer than max_kept_hops keep only the route (their links go by traffic_of).
  static constexpr int max_kept_hops = 4;
  struct LastRoute {
    int dst = -1;
    int hops = -1;  // records in `traffic`; -1: a route too long to keep them here
    double latency = 0;  // the route's, here so that a message need not read the route
    const NetworkRoute* route = nullptr;
    std::array<uint32_t, max_kept_hops> traffic{};
  };
  std::vector<LastRoute> last_route_;  // by host index of the sender
  const LastRoute& last_route(int src, int dst);
  int series_level_ = 0;
  double series_width_ = 0;  // of a bin at series_level_ (2^level x series_unit), 0 before the first message
  double per_series_width_ = 0;
};

// Splits `bytes` evenly over [from, to] into bins of `width` seconds (from 0), adding to
// `series`; a transfer of no duration lands whole in its bin. Exposed for tests.
void spread_over_bins(std::vector<double>& series, double width, double from, double to, double bytes);

}  // namespace collsim
