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

void RailZone::place(const simgrid::kernel::routing::NetPoint* point, Point what) {
  const auto vertex = static_cast<size_t>(point->id());
  if (points_.size() <= vertex) points_.resize(vertex + 1);
  points_[vertex] = what;
}

void RailZone::add_gpu(const simgrid::kernel::routing::NetPoint* host, Ports ports) {
  place(host, {Kind::gpu, static_cast<int>(gpus_.size())});
  gpus_.push_back(ports);
}

RailZone::Point RailZone::point_of(const simgrid::kernel::routing::NetPoint* point) const {
  const auto vertex = static_cast<size_t>(point->id());
  if (vertex >= points_.size() || points_[vertex].index < 0)
    throw std::logic_error("RailZone: a route to a point that is no GPU or switch: " + point->get_name());
  return points_[vertex];
}

void RailZone::gpu_to_gpu(int from, int to, simgrid::kernel::routing::Route* into, double* latency) const {
  const Ports& sender = gpus_[static_cast<size_t>(from)];
  const Ports& receiver = gpus_[static_cast<size_t>(to)];
  const int from_rail = from % gpus_per_node_, to_rail = to % gpus_per_node_;
  if (from / gpus_per_node_ == to / gpus_per_node_) {
    append(into, latency, sender.nvlink->get_link_up());
    append(into, latency, receiver.nvlink->get_link_down());
    return;
  }
  if (from_rail != to_rail && pxn_) {
    // PXN: over NVLink to the node-mate on the receiver's rail, out through its NIC
    const Ports& relay = gpus_[static_cast<size_t>(from - from_rail + to_rail)];
    append(into, latency, sender.nvlink->get_link_up());
    append(into, latency, relay.nvlink->get_link_down());
    append(into, latency, relay.nic->get_link_up());
    append(into, latency, receiver.nic->get_link_down());
    return;
  }
  append(into, latency, sender.nic->get_link_up());
  if (from_rail != to_rail) {
    append(into, latency, uplinks_[static_cast<size_t>(from_rail)]->get_link_up());
    append(into, latency, uplinks_[static_cast<size_t>(to_rail)]->get_link_down());
  }
  append(into, latency, receiver.nic->get_link_down());
}

// A GPU and a reducing switch: its node's NVSwitch through its NVLink port, its rail's
// switch through its NIC; `up` from the GPU to the switch.
void RailZone::switch_route(Point gpu, Point other, bool up, simgrid::kernel::routing::Route* into,
                            double* latency) const {
  const Ports& ports = gpus_[static_cast<size_t>(gpu.index)];
  const bool own_node = other.kind == Kind::node_switch && other.index == gpu.index / gpus_per_node_;
  const bool own_rail = other.kind == Kind::rail_switch && other.index == gpu.index % gpus_per_node_;
  if (!own_node && !own_rail)
    throw std::logic_error("RailZone: a GPU only reaches its own node's and its own rail's switch");
  const simgrid::s4u::SplitDuplexLink* port = own_node ? ports.nvlink : ports.nic;
  append(into, latency, up ? port->get_link_up() : port->get_link_down());
}

void RailZone::get_local_route(const simgrid::kernel::routing::NetPoint* src,
                               const simgrid::kernel::routing::NetPoint* dst, simgrid::kernel::routing::Route* into,
                               double* latency) {
  const Point from = point_of(src), to = point_of(dst);
  if (from.kind == Kind::gpu && to.kind == Kind::gpu) return gpu_to_gpu(from.index, to.index, into, latency);
  if (from.kind == Kind::gpu) return switch_route(from, to, true, into, latency);
  if (to.kind == Kind::gpu) return switch_route(to, from, false, into, latency);
  throw std::logic_error("RailZone: no route between two switches");
}

}  // namespace collsim
