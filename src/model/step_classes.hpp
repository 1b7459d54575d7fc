#pragma once
// One step of a lock-step schedule priced once per class of its messages
// (model/contention.hpp). Every rank posts its messages of the step at once and waits for
// nothing else, so a message's time depends only on the messages it shares a link with,
// and theirs on theirs: the step falls apart into groups of messages joined by shared
// links (a link crossed by two messages joins them, a fatpipe too: its messages count in
// its `sharing`). Two groups whose messages carry the same bytes, leave after the same
// overheads and cross links of the same bandwidths in the same pattern are images of each
// other under the platform's symmetry (a ring step on a star: p groups of one message,
// each on its own uplink and downlink; on a DGX cluster: the messages inside each node,
// and those crossing the rails together): one group of each class is priced in a fluid
// run (model/fluid.hpp), and its times are those of every group of the class. What one
// step costs is then what its distinct groups cost, not what its p messages cost.
//
// The same, to rounding, as pricing the whole step in one fluid run (price_step_whole,
// which the tests compare it with over every family, algorithm and p): the fluid run
// shares a link among the messages crossing it alone. Only above 4096 messages in flight
// at once, where the whole run ends messages within 0.1% of the same time together
// (fluid.hpp), is this pricing the more exact of the two.
#include "algorithms/model_input.hpp"
#include "algorithms/schedule.hpp"
#include "model/fluid.hpp"
#include "model/network.hpp"

namespace collsim {

// What a step alone costs: its slowest message (the last of equal ones, in the step's
// order), the link that set that message's rate (network link id; -1: latency and
// overheads only) and how many messages crossed it then.
struct StepCost {
  double time = 0;
  int bottleneck = -1;
  int sharing = 0;
};

// The step priced once per class of its groups of messages (`facts`: shared by the steps of
// a schedule priced on the same input and network; none: read from the network).
StepCost price_step_by_class(const Step& step, const ModelInput& in, const Network& network, LinkFacts* facts = nullptr);

// The step priced in one fluid run of all its messages (the reference).
StepCost price_step_whole(const Step& step, const ModelInput& in, const Network& network);

}  // namespace collsim
