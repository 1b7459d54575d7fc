#pragma once
// What a message costs beyond the links of its route: the price a GPU transport's protocol
// adds (NCCL's Simple, LL and LL128, src/nccl/transport.hpp). The simulation (Comm) and the
// cost model (model/fluid.hpp) read the same prices, so that on a contention-free platform
// the simulated time still equals the model:
// - the wire carries `wire_factor` bytes per byte of data (the protocol's flags and the
//   path's headers: LL sends 8 bytes of data in a 16-byte line);
// - the receiver holds a message `hop_latency` seconds after its last byte arrived (the
//   protocol's hand-shake per hop, beyond the route's own latency);
// - one message moves at most `rate_cap` bytes/s of wire (a channel's ceiling);
// - every collective starts with `collective_overhead` seconds on every rank (the GPU
//   kernel's launch and set-up).
// Without a MessageCost a message costs its route's alpha + bytes/B, nothing more.
#include <cmath>
#include <limits>

namespace collsim {

struct MessagePrice {
  double wire_factor = 1;
  double hop_latency = 0;
  double rate_cap = std::numeric_limits<double>::infinity();

  // The bytes a message of `bytes` data bytes puts on the wire, whole bytes.
  double wire_bytes(double bytes) const { return wire_factor == 1 ? bytes : std::round(bytes * wire_factor); }
};

class MessageCost {
public:
  virtual ~MessageCost() = default;
  // A message between two endpoints: world ranks, then the platform's switches that take
  // part (endpoint world size + s, src/comm/switch_ops.hpp).
  virtual const MessagePrice& price(int from, int to) const = 0;
  // A message of `bytes` data bytes: a transport whose protocol follows the message's size
  // (NCCL's send/recv: LL for small ones) says so here; the others price every size alike.
  virtual const MessagePrice& price_for(int from, int to, double bytes) const {
    (void)bytes;
    return price(from, to);
  }
  virtual double collective_overhead() const = 0;
};

}  // namespace collsim
