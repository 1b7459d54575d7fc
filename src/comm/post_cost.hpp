#pragma once
// What posting a message costs its sender, beside its price (comm/message_cost.hpp): a GPU's
// proxy thread posts each message across the network before it may leave (NCCL's send/recv:
// nccl/transport.hpp). A transport that charges it implements PostCost too; the simulation
// (Comm::post_send) sleeps the sender that long before the message leaves, so a rank's sends
// post one after another, and the cost model (model/fluid.cpp) adds a round's posts up in the
// order of its sends.
#include "comm/message_cost.hpp"

namespace collsim {

class PostCost {
public:
  virtual ~PostCost() = default;
  // Seconds the sender spends posting a message of `bytes` data bytes between these endpoints.
  virtual double post_overhead(int from, int to, double bytes) const = 0;
};

// The post overhead of a message under `cost` (0 without one, or when it charges none).
inline double post_overhead_of(const MessageCost* cost, int from, int to, double bytes) {
  const auto* posts = dynamic_cast<const PostCost*>(cost);
  return posts == nullptr ? 0 : posts->post_overhead(from, to, bytes);
}

}  // namespace collsim
