#pragma once
// Which links the messages of a run crossed, how busy each one was, and when: bytes,
// busy time, peak concurrent flows and bytes per time bin. Read from the delivered
// messages and each one's SimGrid route (Host::route_to) after the run, so that it costs
// the simulation nothing and cannot change its timings; bandwidth changes (slow-link
// faults) come from Link::on_bandwidth_change_cb during the run.
#include <cstdint>
#include <string>
#include <vector>

#include "comm/message_log.hpp"

namespace simgrid::s4u {
class Host;
}

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
};

struct LinkUsage {
  int bins = 0;                     // series cover [0, bins * bin_width]
  double bin_width = 0;             // seconds
  std::vector<LinkUsageRecord> links;  // links that carried a message or changed bandwidth, busiest first
};

// Time bins of the series, and how many links get one.
constexpr int link_series_bins = 200;
constexpr size_t link_series_max_links = 64;

class LinkUsageRecorder {
public:
  // Before engine->run(): remembers each link's bandwidth and latency and follows changes.
  void start(const std::vector<simgrid::s4u::Host*>& rank_hosts);
  // After the run: the usage of every link by the delivered messages, for a run of
  // `duration` simulated seconds.
  LinkUsage finish(const MessageLog& log, double duration) const;

private:
  std::vector<simgrid::s4u::Host*> rank_hosts_;
};

// Splits `bytes` evenly over [from, to] into bins of `width` seconds (from 0), adding to
// `series`; a transfer of no duration lands whole in its bin. Exposed for tests.
void spread_over_bins(std::vector<double>& series, double width, double from, double to, double bytes);

}  // namespace collsim
