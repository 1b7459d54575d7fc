#pragma once
// A run in Chrome's trace event format (JSON), which ui.perfetto.dev and chrome://tracing
// load: each rank is a thread with its rounds, computation, phases and steps as nested
// slices; each message is a flow arrow from the sender's step to the receiver's; faults
// are instant events; recovery is a thread of its own; the busiest links are counters.
#include <cstddef>
#include <nlohmann/json.hpp>

#include "viz/trace_view.hpp"

namespace collsim::viz {

// Message arrows are written up to this many messages (viewers slow down beyond).
constexpr size_t perfetto_max_flows = 200000;
// The events written stay within perfetto_events_per_entry per entry of the trace (a
// message, a round's rank, a link sample), or perfetto_min_event_budget for small traces.
constexpr double perfetto_events_per_entry = 20;
constexpr double perfetto_min_event_budget = 200000;
// Links whose utilisation becomes a counter track.
constexpr size_t perfetto_link_counters = 8;

nlohmann::json perfetto_trace(const TraceView& trace);

}  // namespace collsim::viz
