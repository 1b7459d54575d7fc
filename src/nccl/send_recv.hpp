#pragma once
// What a GPU pays to run collsim's own algorithms (ring, direct, hierarchical, ...): a GPU
// runs them on NCCL's send/recv (ncclSend and ncclRecv in a group), which NCCL's model does not
// price; collsim charges what its alltoall's point-to-point messages pay (transport.hpp,
// point_to_point): a Ring hop's hwLat and the protocol's efficiency on the path, the Ring's
// baseLat as the kernel's launch. The protocol follows each message's size as NCCL's send/recv
// choose it (addP2pToPlan, src/enqueue.cc): LL up to NCCL_P2P_LL_THRESHOLD (16 KiB) per channel
// the peer may use, Simple above (p2p.hpp cites both).
#include "comm/message_cost.hpp"
#include "nccl/transport.hpp"

namespace collsim::nccl {

class SendRecvCost final : public MessageCost, public PostCost {
public:
  // `vector_bytes`: the collective's vector per rank. The kernel's launch is LL's when the
  // whole vector would travel with LL (then every message does), else Simple's.
  // `nvswitches`: NVSwitch endpoints after the ranks (hierarchical's NVLS level), whose
  // messages pay NVLS's efficiency on NVLink (Transport::wire_factor).
  SendRecvCost(const GpuSystem& system, double vector_bytes, int nvswitches = 0);

  const MessagePrice& price(int from, int to) const override { return simple_.price(from, to); }
  const MessagePrice& price_for(int from, int to, double bytes) const override {
    return bytes <= ll_up_to_ ? ll_.price(from, to) : simple_.price(from, to);
  }
  double collective_overhead() const override { return overhead_; }
  double post_overhead(int from, int to, double bytes) const override {
    return (bytes <= ll_up_to_ ? ll_ : simple_).post_overhead(from, to, bytes);
  }

  // The parts, for people and the tests.
  double ll_up_to() const { return ll_up_to_; }  // bytes: LL up to here, Simple above
  const Transport& ll() const { return ll_; }
  const Transport& simple() const { return simple_; }

private:
  Transport ll_, simple_;
  double ll_up_to_ = 0;
  double overhead_ = 0;
};

}  // namespace collsim::nccl
