#include "sim/link_usage.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <unordered_map>

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

// Bandwidth changes seen during the run, per link (the signal is global: connect it once).
std::map<const sg4::Link*, std::vector<BandwidthChange>>& bandwidth_changes() {
  static std::map<const sg4::Link*, std::vector<BandwidthChange>> changes;
  return changes;
}

// Initial bandwidth and latency of the links, before any fault touches them.
struct Nominal {
  double bandwidth = 0, latency = 0;
};
std::map<const sg4::Link*, Nominal>& nominal_values() {
  static std::map<const sg4::Link*, Nominal> values;
  return values;
}

// One link as the messages use it: the messages that crossed it, by index in the log.
struct LinkTraffic {
  const sg4::Link* link = nullptr;
  std::vector<uint32_t> messages;
};

struct Route {
  std::vector<size_t> links;  // indices into the traffic table
  double latency = 0;
};

// Busy time, peak flows and when the peak was first reached, from the messages' intervals.
void measure(LinkUsageRecord& record, const std::vector<uint32_t>& messages, const MessageLog& log) {
  struct Edge {
    double time;
    int delta;  // +1 a message starts, -1 one ends
  };
  std::vector<Edge> edges;
  edges.reserve(messages.size() * 2);
  for (uint32_t index : messages) {
    const MessageRecord& m = log.records()[index];
    edges.push_back({m.start, +1});
    edges.push_back({m.end, -1});
  }
  // At equal times ends come first: a message that ends when another starts does not overlap it.
  std::sort(edges.begin(), edges.end(),
            [](const Edge& a, const Edge& b) { return a.time < b.time || (a.time == b.time && a.delta < b.delta); });
  int active = 0;
  double busy_since = 0;
  for (const Edge& edge : edges) {
    if (edge.delta > 0 && active == 0) busy_since = edge.time;
    active += edge.delta;
    if (active > record.peak_flows) {
      record.peak_flows = active;
      record.peak_at = edge.time;
    }
    if (edge.delta < 0 && active == 0) record.busy_time += edge.time - busy_since;
  }
}

}  // namespace

void spread_over_bins(std::vector<double>& series, double width, double from, double to, double bytes) {
  if (series.empty() || width <= 0) return;
  const auto last = static_cast<long>(series.size()) - 1;
  auto bin_of = [&](double t) { return std::clamp(static_cast<long>(std::floor(t / width)), 0L, last); };
  if (to <= from) {
    series[static_cast<size_t>(bin_of(from))] += bytes;
    return;
  }
  const double rate = bytes / (to - from);
  for (long bin = bin_of(from); bin <= bin_of(to); ++bin) {
    const double lo = std::max(from, static_cast<double>(bin) * width);
    const double hi = bin == last ? to : std::min(to, static_cast<double>(bin + 1) * width);
    if (hi > lo) series[static_cast<size_t>(bin)] += rate * (hi - lo);
  }
}

void LinkUsageRecorder::start(const std::vector<sg4::Host*>& rank_hosts) {
  rank_hosts_ = rank_hosts;
  for (const sg4::Link* link : sg4::Engine::get_instance()->get_all_links())
    nominal_values()[link] = {link->get_bandwidth(), link->get_latency()};
  static bool connected = false;
  if (!connected) {
    connected = true;
    sg4::Link::on_bandwidth_change_cb([](const sg4::Link& link) {
      bandwidth_changes()[&link].push_back({sg4::Engine::get_clock(), link.get_bandwidth()});
    });
  }
}

LinkUsage LinkUsageRecorder::finish(const MessageLog& log, double duration) const {
  // Routes are looked up once per pair of ranks that talked.
  std::vector<LinkTraffic> traffic;
  std::unordered_map<const sg4::Link*, size_t> traffic_index;
  std::unordered_map<uint64_t, Route> routes;
  auto route_of = [&](int src, int dst) -> const Route& {
    const uint64_t key = (static_cast<uint64_t>(src) << 32) | static_cast<uint32_t>(dst);
    auto [it, inserted] = routes.try_emplace(key);
    if (inserted) {
      std::vector<sg4::Link*> links;
      rank_hosts_[static_cast<size_t>(src)]->route_to(rank_hosts_[static_cast<size_t>(dst)], links, &it->second.latency);
      for (const sg4::Link* link : links) {
        auto [slot, added] = traffic_index.try_emplace(link, traffic.size());
        if (added) traffic.push_back({link, {}});
        it->second.links.push_back(slot->second);
      }
    }
    return it->second;
  };
  const auto& records = log.records();
  std::vector<const Route*> message_routes(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const Route& route = route_of(records[i].src, records[i].dst);
    message_routes[i] = &route;
    for (size_t link : route.links) traffic[link].messages.push_back(static_cast<uint32_t>(i));
  }
  // Links whose bandwidth changed are listed even when no message crossed them.
  for (const auto& [link, changes] : bandwidth_changes())
    if (traffic_index.try_emplace(link, traffic.size()).second) traffic.push_back({link, {}});

  std::vector<LinkUsageRecord> usage(traffic.size());
  for (size_t i = 0; i < traffic.size(); ++i) {
    LinkUsageRecord& record = usage[i];
    const sg4::Link* link = traffic[i].link;
    record.name = link->get_name();
    const auto nominal = nominal_values().find(link);
    record.bandwidth = nominal != nominal_values().end() ? nominal->second.bandwidth : link->get_bandwidth();
    record.latency = nominal != nominal_values().end() ? nominal->second.latency : link->get_latency();
    record.flows = traffic[i].messages.size();
    for (uint32_t m : traffic[i].messages) record.bytes += records[m].bytes;
    measure(record, traffic[i].messages, log);
    if (const auto changes = bandwidth_changes().find(link); changes != bandwidth_changes().end())
      record.bandwidth_changes = changes->second;
  }

  // Busiest first (busy time to the picosecond, then bytes), then in order of first use.
  std::vector<size_t> order(usage.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto picoseconds = [](double t) { return std::llround(t * 1e12); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (picoseconds(usage[a].busy_time) != picoseconds(usage[b].busy_time))
      return picoseconds(usage[a].busy_time) > picoseconds(usage[b].busy_time);
    return usage[a].bytes > usage[b].bytes;
  });

  LinkUsage result;
  if (duration > 0) {
    result.bins = link_series_bins;
    result.bin_width = duration / link_series_bins;
  }
  for (size_t place = 0; place < order.size(); ++place) {
    const size_t i = order[place];
    LinkUsageRecord& record = usage[i];
    // Each message's bytes flow after the route's latency, evenly until it ends (exact for
    // fair-shared flows that start and end together; an estimate otherwise).
    if (place < link_series_max_links && result.bins > 0) {
      record.series.assign(static_cast<size_t>(result.bins), 0.0);
      for (uint32_t m : traffic[i].messages) {
        const MessageRecord& message = records[m];
        const double from = std::min(message.start + message_routes[m]->latency, message.end);
        spread_over_bins(record.series, result.bin_width, from, message.end, static_cast<double>(message.bytes));
      }
      for (double& bytes : record.series) bytes = std::round(bytes);
    }
    result.links.push_back(std::move(record));
  }
  return result;
}

}  // namespace collsim
