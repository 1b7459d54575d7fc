#pragma once
// NCCL's transport as collsim prices it (comm/message_cost.hpp): for the run's (algorithm,
// protocol), every message between two GPUs, or a GPU and a reducing switch, costs
// - wire bytes: its data / (the protocol's efficiency x the path's), the protocol's from
//   NCCL's model (constants.hpp: Ring LL .5, LL128 .92, ...), the path's from NCCL's
//   topology and the fabric's framing: NVLink NCCL's per-link bandwidth over the
//   datasheet's (20.6 / 25 on H100), a NIC its payload share (4096 / 4122 on InfiniBand),
//   an NVSwitch that reduces NVLS's efficiency on top of NVLink's;
// - a hop latency: NCCL's hwLat for the hop's hardware (NVLink, network) and the algorithm,
//   measured by NVIDIA on real hardware, the wire's latency included (the run's links have
//   none: platform.hpp, PlatformOptions::latency_in_transport); the receiver holds a message
//   that long after its last byte;
// - a rate cap: NCCL's per-channel ceilings (LL, LL128, the tree's), shared by the
//   messages a rank has in flight at once;
// - a post overhead (point to point only): the sender's proxy posts each message across the
//   network one after another, NCCL's getNetOverhead each (x3 with Simple);
// and every collective starts after NCCL's base latency (a kernel's launch and set-up).
// docs/nccl.md gives every figure.
#include <memory>
#include <unordered_map>
#include <vector>

#include "comm/message_cost.hpp"
#include "comm/post_cost.hpp"
#include "nccl/constants.hpp"
#include "nccl/system.hpp"

namespace collsim::nccl {

// The run's choice, as the transport needs it.
struct TransportChoice {
  Algo algo = Algo::ring;
  Proto proto = Proto::simple;
  int channels = 1;        // NCCL's channels (the per-channel ceilings add up over them)
  int messages_at_once = 1;  // messages one rank keeps in flight at once (the simulated rings, trees)
  // Point to point (NCCL's alltoall, p2p.hpp): NCCL's model prices no such operation, so a
  // message pays what a hop of the Ring pays on the same connection with its protocol (hwLat,
  // the protocol's efficiency), the kernel's launch the Ring's baseLat, and no ceiling of the
  // ring's model caps it. `algo` is then Ring.
  bool point_to_point = false;
  // Point to point for collsim's own algorithms (send_recv.hpp): each step that uses what a GPU
  // received is a group of send/recv, a kernel of its own, so a GPU holds every message it
  // receives a kernel's launch (the Ring's baseLat of the message's protocol) after its hop,
  // and no launch opens the collective. (NCCL's alltoall: one group, one launch first.)
  bool launch_per_receive = false;
};

// What an endpoint is: a GPU (world rank), a node's NVSwitch or a rail's SHARP switch.
enum class EndpointKind { gpu, nvswitch, sharp_switch };

class Transport final : public MessageCost, public PostCost {
public:
  // `kinds` by endpoint (world ranks first, then the switches).
  Transport(const GpuSystem& system, TransportChoice choice, std::vector<EndpointKind> kinds);

  const MessagePrice& price(int from, int to) const override;
  double collective_overhead() const override { return overhead_; }
  // A message between two GPUs of different nodes: post_overhead(); 0 for the others.
  double post_overhead(int from, int to, double bytes) const override;

  // The parts, for the docs and the tests (seconds, bytes/s of data).
  double hop_latency(Hw hw) const;
  double wire_factor(EndpointKind a, EndpointKind b, bool same_node) const;
  double data_rate_cap() const;  // per message, data bytes/s (infinite: none)
  // What posting a message across the network costs its sender, seconds (0 but for point to
  // point: NCCL's model prices its algorithms' posts in their hop latencies).
  double post_overhead() const;
  // What a GPU holds a message it receives beyond its hop: a kernel's launch with
  // launch_per_receive, else 0 (seconds).
  double receive_launch() const;

private:
  MessagePrice compute(int from, int to) const;

  GpuSystem system_;
  TransportChoice choice_;
  std::vector<EndpointKind> kinds_;
  double overhead_ = 0;
  mutable std::unordered_map<uint64_t, MessagePrice> prices_;
};

// The transport's per-collective overhead for (algo, proto) on this system, seconds
// (NCCL's baseLat, NVLS's whole NVLink latency, CollNet's arity serialisation).
double collective_overhead(const GpuSystem& system, Algo algo, Proto proto);

}  // namespace collsim::nccl
