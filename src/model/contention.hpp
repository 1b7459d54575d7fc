#pragma once
// Prices a schedule on a network the way SimGrid's fluid model (CM02, the `ideal` network)
// does: every message waits its sender's overheads and its route's latency, then takes a
// rate from each link it crosses; a shared link's bandwidth goes to the messages crossing
// it by max-min fairness (SimGrid's lmm, each message weighted by 1 / its route latency), a
// fatpipe gives each message all of it; when a message completes the others share again
// (progressive filling, event by event; model/fluid.hpp). Step-synchronous schedules are
// priced in lock step: a step lasts until its slowest message arrives, steps add up along
// their dependencies, identical steps are priced once. Pipelined and hierarchical
// schedules (Schedule::mark_rank_by_rank) are followed message by message: each rank
// moves on to its next step when its own messages are done, as the algorithms' code does.
// With a finite ModelInput::reduce_bandwidth a rank reduces what it received in a reducing
// step before it goes on: in lock step the step lasts as long as the rank reducing the
// most needs; rank by rank each rank posts its next step once its own reductions are done.
// On the contention-free star of uniform_network() both are exactly the closed-form
// formulas of cost_model.hpp. A ModelInput::message_cost prices every message as Comm does
// (fluid.hpp) and adds its per-collective overhead once, at the start.
#include <optional>
#include <string>

#include "model/cost_model.hpp"
#include "algorithms/schedule.hpp"

namespace collsim {

struct ModelEstimate {
  double time = 0;                 // seconds
  int slowest_step = -1;           // index in the schedule of the longest single step
  double slowest_step_time = 0;
  // The link that set the rate of the slowest message of that step, its bandwidth and how
  // many messages crossed it then (empty: the step is all latency and overhead).
  std::string bottleneck;
  double bottleneck_bandwidth = 0;
  int sharing = 0;
  size_t steps = 0;                // steps of the schedule, repeats counted
  size_t patterns = 0;             // distinct step patterns priced
  size_t largest_step = 0;         // messages in the largest step
  std::string estimate_note;       // the schedule's: why lock step is only an estimate (empty: exact)
  bool rank_by_rank = false;       // every message followed rank by rank (else steps in lock step)
};

ModelEstimate estimate_schedule(const Schedule& schedule, const ModelInput& in);

// (max_followed_messages, algorithms/schedule.hpp: the most messages of a rank-by-rank
// schedule followed message by message; beyond, its steps are priced in lock step.)

// Why running this schedule is impractical, or empty: a step with more than
// max_messages_per_step messages at once (direct at p = 1024 posts p(p-1) = 1M), or a rank
// receiving more than max_receive_bytes in one step (buffers it must hold at once).
constexpr size_t max_messages_per_step = 65536;
constexpr double max_receive_bytes = 64.0 * (1ull << 30);
std::string impractical_reason(const Schedule& schedule);

// `collsim model`'s own limits (README "Limits"; no run limit applies to it, nothing is
// simulated): a schedule describes at most max_model_messages messages (repeated steps
// counted once: a ring of p = 131,072 is one step of p messages) and holds at most
// max_model_step_messages in one step.
constexpr size_t max_model_messages = size_t{1} << 23;
constexpr size_t max_model_step_messages = size_t{1} << 18;
// The algorithm's schedule on `in`, or nullopt with `why` set when it describes more than
// max_model_messages messages (it is not built further).
std::optional<Schedule> schedule_within_model_limits(const AlgorithmInfo& algorithm, const ModelInput& in,
                                                     std::string& why);
// Why the model does not price this schedule, or empty (a step beyond max_model_step_messages).
std::string model_limit_reason(const Schedule& schedule);

// What the model does not see under SimGrid's realistic (TCP) network.
std::string realistic_network_caveat();

}  // namespace collsim
