#include "nccl/send_recv.hpp"

#include "nccl/p2p.hpp"

#include <utility>

namespace collsim::nccl {

namespace {

constexpr double p2p_ll_threshold = 16384;  // NCCL_P2P_LL_THRESHOLD (p2p.cpp, [Q])

Transport point_to_point(const GpuSystem& system, Proto proto, SendRecvLaunch launch, int nvswitches) {
  const TransportChoice choice{.algo = Algo::ring, .proto = proto, .channels = 1, .messages_at_once = 1,
                               .point_to_point = true, .launch_per_receive = launch == SendRecvLaunch::per_step};
  // (a communicator's system, nccl::group_system, prices world ranks: node_of holds them all;
  // the switches' endpoints follow them)
  std::vector<EndpointKind> kinds(system.node_of.size(), EndpointKind::gpu);
  kinds.resize(kinds.size() + static_cast<size_t>(nvswitches), EndpointKind::nvswitch);
  return Transport(system, choice, std::move(kinds));
}

// The channels NCCL's send/recv give one peer (nChannelsMax of an op): the communicator's p2p
// channels, fewer towards a peer across the network (p2p.hpp).
int channels_per_peer(const GpuSystem& system) {
  return plan_alltoall(system, communicator_channels(system), 0).channels_per_peer;
}

}  // namespace

SendRecvCost::SendRecvCost(const GpuSystem& system, SendRecvLaunch launch, double vector_bytes, int nvswitches)
    : launch_(launch), ll_(point_to_point(system, Proto::ll, launch, nvswitches)),
      simple_(point_to_point(system, Proto::simple, launch, nvswitches)),
      ll_up_to_(channels_per_peer(system) * p2p_ll_threshold),
      overhead_(vector_bytes <= ll_up_to_ ? ll_.collective_overhead() : simple_.collective_overhead()) {}

}  // namespace collsim::nccl
