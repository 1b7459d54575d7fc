#pragma once
// The fluid run under the cost model (model/contention.hpp): messages on their routes,
// each link's bandwidth shared by the messages crossing it at that moment, event by event,
// the way SimGrid's CM02 (the `ideal` network) shares it. Every rank goes through its
// messages in rounds, as the algorithms' code does: a round's sends and receives are
// posted together and the rank's next round is posted when all of them have completed.
// A message moves once both its ends have posted it (SimGrid's mailbox rendezvous) and its
// sender's overheads and its route's latency are paid.
//
// With a ModelInput::message_cost (comm/message_cost.hpp) each message carries its wire
// bytes, moves at most at its rate cap, and completes for its receiver its hop latency
// after its last byte arrived (for its sender when the last byte arrived), as Comm does.
//
// A message marked `reduced` is reduced by its receiver once the receiver's round is done
// (the algorithms wait for a round's messages, then combine what they received): with a
// finite ModelInput::reduce_bandwidth the receiver is busy (the bytes it reduces in the
// round) / reduce_bandwidth before it posts its next round, as ReduceOp::combine keeps
// the simulation's rank busy.
//
// One step priced alone is a run in which every rank has one round (the lock-step pricing
// of step-synchronous schedules); a whole pipelined schedule is one run in which each
// rank's rounds follow one another, so that no rank waits for a step it takes no part in.
//
// Exact (to rounding) up to 4096 messages in flight at once; above, messages that end
// within 0.1% of the same time end together (each at its own time, the bandwidth it frees
// shared with the others slightly early: the time is off by less than 0.1%), so that a
// step of 65,280 messages (direct at p = 256) costs a thousand sharings, not 65,280.
#include <cstdint>
#include <utility>
#include <vector>

#include "algorithms/schedule.hpp"
#include "model/cost_model.hpp"
#include "model/network.hpp"

namespace collsim {

// What the pricing of one schedule's steps (one input, one network) reads again and again:
// each link's bandwidth and sharing, kept side by side by link id once read (the lock-step
// pricing's fluid runs read them too, model/step_classes.hpp). A step of
// 65,536 messages on dgx-h100:16384 read a link record of the network per message and hop,
// nearly each a cache miss; the binary tree prices 124 such steps.
class LinkFacts {
public:
  // The link's bandwidth (its bits) and whether it is shared.
  std::pair<uint64_t, bool> of(const Network& network, int id) {
    const auto at = static_cast<size_t>(id);
    if (at >= bandwidth_bits_.size() || bandwidth_bits_[at] == 0) read(network, id);
    return {bandwidth_bits_[at], shared_[at]};
  }

private:
  void read(const Network& network, int id);
  std::vector<uint64_t> bandwidth_bits_;  // by link id; 0: not read yet (a bandwidth is > 0)
  std::vector<bool> shared_;
};

struct FluidMessage {
  Flow flow;
  int round_key = 0;  // messages of one rank with the same key belong to one of its rounds
  bool reduced = false;  // its receiver reduces it once its round is done
  // Pipelined through a FIFO of this many slots (NCCL's, in chunks; 0: not pipelined): its
  // receiver posts it `fifo` rounds before the round that waits for it, its sender waits for
  // it `fifo` rounds after the round that posts it (or in its last round); a message whose
  // flow is `ahead` is posted by its sender `fifo` rounds early too.
  int fifo = 0;
  // Its receiver waits for it in its last round whose key is at most this (-1: round_key's).
  int wait_key = -1;
  // Its sender waits for it in its last round, whatever the FIFO (a flow whose wait_steps is
  // at_end_wait_steps: algorithms/pipelined_rounds.hpp, PlannedMessage::at_end).
  bool at_end = false;
};

struct Arrival {
  double posted = 0;   // when the later of its two ends posted it
  double finish = 0;   // when its last byte arrived
  int bottleneck = -1; // network link that set its rate last (-1: latency and overheads only)
  int sharing = 0;     // messages crossing that link then
  double reduced = 0;  // when its receiver has reduced it (finish when it is not reduced)
};

// Runs the messages, given in round order (a rank's rounds in the order of their first
// message; within a round, a sender's messages leave flow.order + 1 overheads after it is
// posted). Ranks index in.endpoints (or are endpoints themselves).
std::vector<Arrival> run_fluid(const std::vector<FluidMessage>& messages, const ModelInput& in, const Network& network);
// The same with the messages' ranks numbered 0 to endpoints.size() - 1, rank r at network
// endpoint endpoints[r]: a part of a step run apart from the rest (model/step_classes.hpp),
// without a round list for every rank of the run.
std::vector<Arrival> run_fluid(const std::vector<FluidMessage>& messages, const ModelInput& in, const Network& network,
                               const std::vector<int>& endpoints, LinkFacts* facts = nullptr);

}  // namespace collsim
