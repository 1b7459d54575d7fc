#include "sim/link_usage.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

namespace sg4 = simgrid::s4u;

namespace collsim {
namespace {

// The width of a series bin at level 0: small enough for the shortest run (256 bins
// cover 0.23 ns), a power of two so that doubling it is exact.
const double series_unit = std::ldexp(1.0, -40);

// Transfers end nearly in order: one that overlaps the last span widens it, any other
// starts a span (the spans' union is what matters, not that they are disjoint).
void note_span(std::vector<std::pair<double, double>>& spans, double start, double end) {
  if (!spans.empty() && start <= spans.back().second && end >= spans.back().first) {
    spans.back().first = std::min(spans.back().first, start);
    spans.back().second = std::max(spans.back().second, end);
    return;
  }
  spans.emplace_back(start, end);
}

}  // namespace

namespace {

// Adds `bytes`, spread evenly over [from, to], to bins first..last of `series` (`last`
// may be the final bin, which takes whatever lies past it).
void spread_over(std::vector<double>& series, double width, long first, long last, double from, double to, double bytes) {
  const long final_bin = static_cast<long>(series.size()) - 1;
  if (to <= from) {
    series[static_cast<size_t>(first)] += bytes;
    return;
  }
  const double rate = bytes / (to - from);
  if (first == last) {  // most messages: [from, to] lies in one bin
    series[static_cast<size_t>(first)] += rate * (to - from);
    return;
  }
  for (long bin = first; bin <= last; ++bin) {
    const double lo = std::max(from, static_cast<double>(bin) * width);
    const double hi = bin == final_bin ? to : std::min(to, static_cast<double>(bin + 1) * width);
    if (hi > lo) series[static_cast<size_t>(bin)] += rate * (hi - lo);
  }
}

}  // namespace

void spread_over_bins(std::vector<double>& series, double width, double from, double to, double bytes) {
  if (series.empty() || width <= 0) return;
  const auto last = static_cast<long>(series.size()) - 1;
  auto bin_of = [&](double t) { return std::clamp(static_cast<long>(std::floor(t / width)), 0L, last); };
  spread_over(series, width, bin_of(from), bin_of(to), from, to, bytes);
}

// Edges are swept in time order, ends before starts at equal times: a message that ends
// when another starts does not overlap it.
void LinkUsageRecorder::Traffic::add(Edge edge) {
  auto in_order = [](const Edge& a, const Edge& b) { return a.time < b.time || (a.time == b.time && a.delta <= b.delta); };
  if (swept == pending.size()) {
    pending.clear();
    swept = 0;
  }
  if (swept == pending.size() || in_order(pending.back(), edge)) {
    pending.push_back(edge);
    return;
  }
  auto position = std::prev(pending.end());
  const auto front = pending.begin() + static_cast<std::ptrdiff_t>(swept);
  while (position != front) {
    if (in_order(*std::prev(position), edge)) break;
    --position;
  }
  pending.insert(position, edge);
}

void LinkUsageRecorder::Traffic::sweep(double before) {
  while (swept < pending.size() && pending[swept].time < before) {
    const Edge edge = pending[swept++];
    if (edge.delta > 0 && active == 0) busy_since = edge.time;
    active += edge.delta;
    if (active > peak_flows) {
      peak_flows = active;
      peak_at = edge.time;
    }
    if (edge.delta < 0 && active == 0) busy_time += edge.time - busy_since;
  }
  if (swept > 64 && 2 * swept > pending.size()) {
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(swept));
    swept = 0;
  }
}

void LinkUsageRecorder::watch(const std::vector<const sg4::Link*>& links) {
  for (const sg4::Link* link : links) spans_[link];
}

void LinkUsageRecorder::start(std::shared_ptr<const RouteCache> routes, MessageLog& log) {
  last_route_.assign(routes->endpoints(), LastRoute{});  // the ranks, then the server processes (logged too)
  traffic_of_link_.clear();
  routes_ = std::move(routes);
  log.observe(this);
  sg4::Link::on_bandwidth_change_cb([weak = std::weak_ptr<BandwidthChanges>(changes_)](const sg4::Link& link) {
    const auto changes = weak.lock();
    if (!changes) return;
    const auto [at, added] = changes->index.try_emplace(&link, changes->by_link.size());
    if (added) changes->by_link.emplace_back(&link, std::vector<BandwidthChange>{});
    std::vector<BandwidthChange>& series = changes->by_link[at->second].second;
    // A bandwidth set again to its value (sim/faults.cpp, after a latency change) is no change.
    if (!series.empty() && series.back().bandwidth == link.get_bandwidth()) return;
    series.push_back({sg4::Engine::get_clock(), link.get_bandwidth()});
  });
}

LinkUsageRecorder::Traffic& LinkUsageRecorder::traffic_of(int link) {
  if (traffic_of_link_.size() <= static_cast<size_t>(link)) traffic_of_link_.resize(routes_->links(), -1);
  int& index = traffic_of_link_[static_cast<size_t>(link)];
  if (index < 0) index = static_cast<int>(&traffic_of(routes_->simgrid_link(link)) - traffic_.data());
  return traffic_[static_cast<size_t>(index)];
}

LinkUsageRecorder::Traffic& LinkUsageRecorder::traffic_of(const sg4::Link* crossed) {
  const auto [at, added] = traffic_index_.try_emplace(crossed, static_cast<uint32_t>(traffic_.size()));
  if (added) {
    traffic_.push_back(Traffic{crossed});
    if (const auto watched = spans_.find(crossed); watched != spans_.end()) traffic_.back().spans = &watched->second;
  }
  return traffic_[at->second];
}

// The series bins double in width until they cover `time`.
void LinkUsageRecorder::grow_series_to(double time) {
  if (time < streamed_series_bins * series_width_) return;
  while (time >= streamed_series_bins * std::ldexp(series_unit, series_level_)) ++series_level_;
  series_width_ = std::ldexp(series_unit, series_level_);
  per_series_width_ = 1 / series_width_;
}

namespace {

// Brings `series` from bins of 2^`level` units to 2^`to` units: each bin is the sum of the
// 2^(to - level) it replaces.
void merge_bins(std::vector<double>& series, int& level, int to) {
  if (level == to) return;
  const size_t merged = size_t{1} << std::min(to - level, 30);
  const size_t bins = series.size();
  for (size_t bin = 0; bin * merged < bins; ++bin) {
    double sum = 0;
    for (size_t k = bin * merged; k < std::min(bins, (bin + 1) * merged); ++k) sum += series[k];
    series[bin] = sum;
  }
  std::fill(series.begin() + static_cast<long>((bins + merged - 1) / merged), series.end(), 0.0);
  level = to;
}

}  // namespace

// Brings a link's series to the current bin width.
void LinkUsageRecorder::catch_up(Traffic& traffic) const {
  if (traffic.series.empty()) {
    traffic.series.assign(streamed_series_bins, 0.0);
    traffic.series_level = series_level_;
    return;
  }
  merge_bins(traffic.series, traffic.series_level, series_level_);
}

const LinkUsageRecorder::LastRoute& LinkUsageRecorder::last_route(int src, int dst) {
  LastRoute& last = last_route_[static_cast<size_t>(src)];
  if (last.dst == dst) return last;
  const NetworkRoute& route = routes_->route(src, dst);
  last.dst = dst;
  last.route = &route;
  last.latency = route.latency;
  last.hops = route.links.size() <= max_kept_hops ? static_cast<int>(route.links.size()) : -1;
  for (int hop = 0; hop < last.hops; ++hop) {
    const Traffic& traffic = traffic_of(route.links[static_cast<size_t>(hop)]);  // may grow traffic_
    last.traffic[static_cast<size_t>(hop)] = static_cast<uint32_t>(&traffic - traffic_.data());
  }
  return last;
}

void LinkUsageRecorder::on_message(const MessageRecord& message, double settled) {
  const LastRoute& last = last_route(message.src, message.dst);
  grow_series_to(message.end);
  // Each message's bytes flow after the route's latency, evenly until it ends (exact for
  // fair-shared flows that start and end together; an estimate otherwise).
  const double from = std::min(message.start + last.latency, message.end);
  const auto index = static_cast<uint32_t>(batch_.size());
  batch_.push_back({message.start, message.end, settled, from, message.bytes, series_level_});
  if (last.hops >= 0) {
    for (int hop = 0; hop < last.hops; ++hop) hops_.push_back({last.traffic[static_cast<size_t>(hop)], index});
  } else {
    for (int link : last.route->links) {
      const Traffic& traffic = traffic_of(link);  // may grow traffic_
      hops_.push_back({static_cast<uint32_t>(&traffic - traffic_.data()), index});
    }
  }
  if (batch_.size() >= batch_messages) flush();
}

LinkUsageRecorder::SeriesBins::SeriesBins(int at)
    : level(at), width(std::ldexp(series_unit, at)), per_width(1 / width) {}

void LinkUsageRecorder::follow(Traffic& traffic, const Followed& message, const SeriesBins& bins) {
  const auto final_bin = static_cast<long>(streamed_series_bins) - 1;
  auto bin_of = [&](double t) { return std::clamp(static_cast<long>(std::floor(t * bins.per_width)), 0L, final_bin); };
  const long first = bin_of(message.from), last_bin = message.end <= message.from ? first : bin_of(message.end);
  traffic.bytes += message.bytes;
  ++traffic.flows;
  traffic.add({message.start, +1});
  traffic.add({message.end, -1});
  traffic.sweep(message.settled);
  if (traffic.spans != nullptr) note_span(*traffic.spans, message.start, message.end);
  if (traffic.series.empty()) {
    traffic.series.assign(streamed_series_bins, 0.0);
    traffic.series_level = message.level;
  }
  merge_bins(traffic.series, traffic.series_level, message.level);
  const auto bytes = static_cast<double>(message.bytes);
  spread_over(traffic.series, bins.width, first, last_bin, message.from, message.end, bytes);
  if (capture_ != nullptr) capture_->spread(static_cast<size_t>(&traffic - traffic_.data()), message.from, message.end, bytes);
}

// The batch's hops sorted by link (a counting sort: stable, so each link's messages stay
// in the order recorded), then each link follows its messages. Called before anything
// else reads or changes the links' figures: a batch is wholly inside a capture or outside.
void LinkUsageRecorder::flush() {
  if (batch_.empty()) return;
  hop_starts_.assign(traffic_.size() + 1, 0);
  for (const Hop& hop : hops_) ++hop_starts_[hop.traffic + 1];
  for (size_t t = 1; t < hop_starts_.size(); ++t) hop_starts_[t] += hop_starts_[t - 1];
  sorted_hops_.resize(hops_.size());
  for (const Hop& hop : hops_) sorted_hops_[hop_starts_[hop.traffic]++] = hop;
  SeriesBins bins;
  for (const Hop& hop : sorted_hops_) {
    const Followed& message = batch_[hop.message];
    if (message.level != bins.level) bins = SeriesBins(message.level);
    follow(traffic_[hop.traffic], message, bins);
  }
  batch_.clear();
  hops_.clear();
}

// The usage figures count delivered messages only; a watched link's spans count both.
void LinkUsageRecorder::on_abandoned(int src, int dst, double start, double end) {
  if (spans_.empty()) return;
  flush();  // a watched link's spans in the order their transfers ended
  for (int link : routes_->route(src, dst).links)
    if (const auto watched = spans_.find(routes_->simgrid_link(link)); watched != spans_.end())
      note_span(watched->second, start, end);
}

void LinkUsageRecorder::sweep_all(double before) {
  for (Traffic& traffic : traffic_) traffic.sweep(before);
}

// A captured link's bytes in time bins from the capture's start, at the capture's width.
void LinkUsageRecorder::CaptureState::spread(size_t traffic, double from, double to, double bytes) {
  const double begin = from - start, end = to - start;
  while (end >= streamed_series_bins * std::ldexp(series_unit, level)) ++level;
  if (series.size() <= traffic) {
    series.resize(traffic + 1);
    levels.resize(traffic + 1, 0);
  }
  std::vector<double>& bins = series[traffic];
  if (bins.empty()) {
    bins.assign(streamed_series_bins, 0.0);
    levels[traffic] = level;
  }
  merge_bins(bins, levels[traffic], level);
  const double per_width = 1 / std::ldexp(series_unit, level);
  const auto final_bin = static_cast<long>(streamed_series_bins) - 1;
  auto bin_of = [&](double t) { return std::clamp(static_cast<long>(std::floor(t * per_width)), 0L, final_bin); };
  spread_over(bins, std::ldexp(series_unit, level), bin_of(begin), end <= begin ? bin_of(begin) : bin_of(end), begin, end, bytes);
}

namespace {

// What one collective's messages did to one link.
struct LinkCaptured {
  const sg4::Link* link = nullptr;
  uint64_t bytes = 0, flows = 0;
  double busy_time = 0, peak_at = 0;
  int peak_flows = 0;
  std::vector<double> series;  // bytes per bin of the capture's width, from its start
};

struct LinksCaptured : ObservedCapture {
  double start = 0, end = 0;
  int level = 0;  // of the series' bins
  std::vector<LinkCaptured> links;  // in order of first use, as far as it made links new
};

}  // namespace

// Every link's edges up to the start are swept (nothing is in flight), so that the capture's
// busy time is what its own messages add, and its peak is its own (the run's restored after).
void LinkUsageRecorder::begin_capture(double now, double settled) {
  flush();
  sweep_all(settled);
  capture_ = std::make_unique<CaptureState>();
  capture_->start = now;
  for (Traffic& traffic : traffic_) {
    capture_->before.push_back({traffic.bytes, traffic.flows, traffic.busy_time, traffic.peak_at, traffic.peak_flows});
    traffic.peak_flows = 0;
  }
}

std::unique_ptr<ObservedCapture> LinkUsageRecorder::end_capture(double now, double settled) {
  if (!capture_) return nullptr;
  flush();
  sweep_all(settled);
  auto captured = std::make_unique<LinksCaptured>();
  captured->start = capture_->start;
  captured->end = now;
  captured->level = capture_->level;
  for (size_t i = 0; i < traffic_.size(); ++i) {
    Traffic& traffic = traffic_[i];
    const Before before = i < capture_->before.size() ? capture_->before[i] : Before{};
    LinkCaptured link{traffic.link, traffic.bytes - before.bytes, traffic.flows - before.flows,
                      traffic.busy_time - before.busy_time, traffic.peak_at, traffic.peak_flows, {}};
    if (before.peak_flows >= traffic.peak_flows) {
      traffic.peak_flows = before.peak_flows;
      traffic.peak_at = before.peak_at;
    }
    if (link.flows == 0) continue;
    if (i < capture_->series.size()) {
      link.series = std::move(capture_->series[i]);
      if (!link.series.empty()) merge_bins(link.series, capture_->levels[i], capture_->level);
    }
    captured->links.push_back(std::move(link));
  }
  capture_.reset();
  return captured;
}

// The captured links' figures added again, `shift` later; a link's series takes each of
// the capture's bins spread evenly over where it falls now (the capture's bins are at most
// 1/128 of its duration: a series bin may take or leave that much of a bin's bytes).
void LinkUsageRecorder::replay(const ObservedCapture& observed, double shift, double settled) {
  const auto& captured = static_cast<const LinksCaptured&>(observed);
  flush();
  sweep_all(settled);  // (an earlier peak as high as the replay's stays the first)
  grow_series_to(captured.end + shift);
  const double local_width = std::ldexp(series_unit, captured.level);
  const auto final_bin = static_cast<long>(streamed_series_bins) - 1;
  auto bin_of = [&](double t) { return std::clamp(static_cast<long>(std::floor(t * per_series_width_)), 0L, final_bin); };
  for (const LinkCaptured& link : captured.links) {
    Traffic& traffic = traffic_of(link.link);
    traffic.bytes += link.bytes;
    traffic.flows += link.flows;
    traffic.busy_time += link.busy_time;
    if (link.peak_flows > traffic.peak_flows) {
      traffic.peak_flows = link.peak_flows;
      traffic.peak_at = link.peak_at + shift;
    }
    if (traffic.series_level != series_level_ || traffic.series.empty()) catch_up(traffic);
    for (size_t bin = 0; bin < link.series.size(); ++bin) {
      if (link.series[bin] == 0) continue;
      const double from = captured.start + shift + static_cast<double>(bin) * local_width, to = from + local_width;
      spread_over(traffic.series, series_width_, bin_of(from), bin_of(to), from, to, link.series[bin]);
    }
  }
}

LinkUsage LinkUsageRecorder::finish(double duration) {
  flush();
  for (Traffic& traffic : traffic_) traffic.sweep(std::numeric_limits<double>::infinity());
  // Links whose bandwidth changed are listed even when no message crossed them.
  for (const auto& [link, changes] : changes_->by_link)
    if (traffic_index_.try_emplace(link, static_cast<uint32_t>(traffic_.size())).second) traffic_.push_back(Traffic{link});

  std::vector<LinkUsageRecord> usage(traffic_.size());
  for (size_t i = 0; i < traffic_.size(); ++i) {
    LinkUsageRecord& record = usage[i];
    const Traffic& traffic = traffic_[i];
    record.name = traffic.link->get_name();
    // As built, before any fault touched it (the route cache read it then).
    const RouteCache::Nominal nominal = routes_->nominal(traffic.link);
    record.bandwidth = nominal.bandwidth;
    record.latency = nominal.latency;
    record.bytes = traffic.bytes;
    record.flows = traffic.flows;
    record.busy_time = traffic.busy_time;
    record.peak_flows = traffic.peak_flows;
    record.peak_at = traffic.peak_at;
    if (const auto watched = spans_.find(traffic.link); watched != spans_.end()) record.spans = watched->second;
    if (const auto changed = changes_->index.find(traffic.link); changed != changes_->index.end())
      record.bandwidth_changes = changes_->by_link[changed->second].second;
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
  const size_t charted = std::min(order.size(), link_series_max_links);

  // The series added up as messages arrived: the same whether the store kept every
  // message or a sample (no figure depends on --messages), cut to the bins the run covers
  // (anything after its end, such as a dropped straggler's message, lands in the last one).
  LinkUsage result;
  if (duration > 0) {
    grow_series_to(duration);
    result.bin_width = std::ldexp(series_unit, series_level_);
    result.bins = std::clamp(static_cast<int>(std::ceil(duration / result.bin_width)), 1, streamed_series_bins);
    for (size_t place = 0; place < charted; ++place) {
      Traffic& traffic = traffic_[order[place]];
      catch_up(traffic);
      std::vector<double>& series = usage[order[place]].series;
      series.assign(traffic.series.begin(), traffic.series.begin() + result.bins);
      for (size_t bin = static_cast<size_t>(result.bins); bin < traffic.series.size(); ++bin) series.back() += traffic.series[bin];
    }
  }
  for (size_t place = 0; place < order.size(); ++place) {
    LinkUsageRecord& record = usage[order[place]];
    for (double& bytes : record.series) bytes = std::round(bytes);
    result.links.push_back(std::move(record));
  }
  return result;
}

}  // namespace collsim
