#include "platform/rail_zone.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <stdexcept>

namespace collsim {

namespace {

void append(simgrid::kernel::routing::Route* into, double* latency, const simgrid::s4u::Link* link) {
  into->link_list_.push_back(link->get_impl());
  if (latency != nullptr) *latency += link->get_latency();
}

}  // namespace

void RailZone::add_gpu(const simgrid::kernel::routing::NetPoint* host, Ports ports) {
  const auto vertex = static_cast<size_t>(host->id());
  if (index_of_vertex_.size() <= vertex) index_of_vertex_.resize(vertex + 1, -1);
  index_of_vertex_[vertex] = static_cast<long>(gpus_.size());
  gpus_.push_back(ports);
}

int RailZone::gpu_index(const simgrid::kernel::routing::NetPoint* point) const {
  const auto vertex = static_cast<size_t>(point->id());
  if (vertex >= index_of_vertex_.size() || index_of_vertex_[vertex] < 0)
    throw std::logic_error("RailZone: a route to a point that is no GPU: " + point->get_name());
  return static_cast<int>(index_of_vertex_[vertex]);
}

void RailZone::get_local_route(const simgrid::kernel::routing::NetPoint* src,
                               const simgrid::kernel::routing::NetPoint* dst, simgrid::kernel::routing::Route* into,
                               double* latency) {
  const int from = gpu_index(src), to = gpu_index(dst);
  const Ports& sender = gpus_[static_cast<size_t>(from)];
  const Ports& receiver = gpus_[static_cast<size_t>(to)];
  const int from_rail = from % gpus_per_node_, to_rail = to % gpus_per_node_;
  if (from / gpus_per_node_ == to / gpus_per_node_) {
    append(into, latency, sender.nvlink->get_link_up());
    append(into, latency, receiver.nvlink->get_link_down());
    return;
  }
  append(into, latency, sender.nic->get_link_up());
  if (from_rail != to_rail) {
    append(into, latency, uplinks_[static_cast<size_t>(from_rail)]->get_link_up());
    append(into, latency, uplinks_[static_cast<size_t>(to_rail)]->get_link_down());
  }
  append(into, latency, receiver.nic->get_link_down());
}

}  // namespace collsim
