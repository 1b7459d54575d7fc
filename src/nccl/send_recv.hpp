#pragma once
// What a GPU pays to run collsim's own algorithms (ring, direct, hierarchical, ...): a GPU
// runs them on NCCL's send/recv (ncclSend and ncclRecv in a group), which NCCL's model does not
// price; collsim charges what its alltoall's point-to-point messages pay (transport.hpp,
// point_to_point): a Ring hop's hwLat and the protocol's efficiency on the path, a post per
// network message, and the Ring's baseLat as a kernel's launch. The protocol follows each
// message's size as NCCL's send/recv choose it (addP2pToPlan, src/enqueue.cc): LL up to
// NCCL_P2P_LL_THRESHOLD (16 KiB) per channel the peer may use, Simple above (p2p.hpp cites both).
//
// How many launches (SendRecvLaunch): NCCL launches one kernel per group of calls (ncclGroupEnd
// -> groupLaunch -> doLaunches, which launches each kernel plan ncclLaunchPrepare built from the
// group's tasks, src/group.cc and src/enqueue.cc, NCCL 2.25.1; the user guide's "Group Calls",
// "Aggregated Operations": several operations "within a single NCCL launch ... reducing the
// launch overhead"). A step that sends what the step before received cannot join that step's
// group (ncclGroupEnd returns before the data is in), so a collective written on send/recv
// launches a kernel per dependent step. Where collsim's algorithm stands in for one of NCCL's
// own collectives (a framework's ncclAllReduce in a training iteration, a parallel run's
// reduce-scatter and all-gather), it is one kernel as NCCL runs each collective ("NCCL ...
// implements each collective in a single kernel", the developer guide's overview).
#include "comm/message_cost.hpp"
#include "nccl/transport.hpp"

namespace collsim::nccl {

class SendRecvCost final : public MessageCost, public PostCost {
public:
  // `vector_bytes`: the collective's vector per rank; with per_collective the launch is LL's
  // when the whole vector would travel with LL (then every message does), else Simple's.
  // `nvswitches`: NVSwitch endpoints after the ranks (hierarchical's NVLS level), whose
  // messages pay NVLS's efficiency on NVLink (Transport::wire_factor).
  SendRecvCost(const GpuSystem& system, SendRecvLaunch launch, double vector_bytes, int nvswitches = 0);

  const MessagePrice& price(int from, int to) const override { return simple_.price(from, to); }
  const MessagePrice& price_for(int from, int to, double bytes) const override {
    return bytes <= ll_up_to_ ? ll_.price(from, to) : simple_.price(from, to);
  }
  // per_step: no launch opens the collective, each message a GPU receives carries the launch
  // of the step that uses it (in its hop latency)
  double collective_overhead() const override { return overhead_; }
  double post_overhead(int from, int to, double bytes) const override {
    return (bytes <= ll_up_to_ ? ll_ : simple_).post_overhead(from, to, bytes);
  }

  // The parts, for people and the tests.
  SendRecvLaunch launch() const { return launch_; }
  double ll_up_to() const { return ll_up_to_; }  // bytes: LL up to here, Simple above
  const Transport& ll() const { return ll_; }
  const Transport& simple() const { return simple_; }

private:
  SendRecvLaunch launch_;
  Transport ll_, simple_;
  double ll_up_to_ = 0;
  double overhead_ = 0;
};

}  // namespace collsim::nccl
