#include "platform/rail_zone.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Link.hpp>
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
  if (from == to) {
    // A GPU to itself (a parameter server beside its worker): SimGrid's loopback, as on every
    // generated platform (generators.cpp), not its NVLink port up and down, which the other
    // GPUs' transfers to it share.
    append(into, latency, simgrid::s4u::Link::by_name("__loopback__"));
    return;
  }
  if (from / gpus_per_node_ == to / gpus_per_node_) {
    append(into, latency, sender.nvlink->get_link_up());
    append(into, latency, receiver.nvlink->get_link_down());
    return;
  }
  // The NICs the data crosses: the receiver's (or the node mate's that carries its traffic),
  // and the sender's, or with PXN the node mate's on the receiving NIC's rail (NVLink to it,
  // out through its NIC), unless that NIC is detoured itself.
  const int in = nic_of(to);
  int out = nic_of(from);
  const int mate = from - from % gpus_per_node_ + in % gpus_per_node_;
  if (pxn_ && out % gpus_per_node_ != in % gpus_per_node_ && nic_of(mate) == mate) out = mate;
  if (out != from) {
    append(into, latency, sender.nvlink->get_link_up());
    append(into, latency, gpus_[static_cast<size_t>(out)].nvlink->get_link_down());
  }
  append(into, latency, gpus_[static_cast<size_t>(out)].nic->get_link_up());
  const int out_rail = out % gpus_per_node_, in_rail = in % gpus_per_node_;
  if (out_rail != in_rail) {
    append(into, latency, uplinks_[static_cast<size_t>(out_rail)]->get_link_up());
    append(into, latency, uplinks_[static_cast<size_t>(in_rail)]->get_link_down());
  }
  append(into, latency, gpus_[static_cast<size_t>(in)].nic->get_link_down());
  if (in != to) {
    append(into, latency, gpus_[static_cast<size_t>(in)].nvlink->get_link_up());
    append(into, latency, receiver.nvlink->get_link_down());
  }
}

void RailZone::detour_nic(const simgrid::kernel::routing::NetPoint* gpu,
                          const simgrid::kernel::routing::NetPoint* through) {
  if (!same_node(gpu, through)) throw std::logic_error("RailZone: a NIC detoured to another node's GPU");
  if (nics_.empty())
    for (int index = 0; index < static_cast<int>(gpus_.size()); ++index) nics_.push_back(index);
  // (GPUs that went through this one's NIC go through the new one's)
  const int from = point_of(gpu).index, to = point_of(through).index;
  for (int& carrier : nics_)
    if (carrier == from) carrier = to;
}

void RailZone::restore_nic(const simgrid::kernel::routing::NetPoint* gpu) {
  const int index = point_of(gpu).index;
  if (!nics_.empty()) nics_[static_cast<size_t>(index)] = index;
}

bool RailZone::same_node(const simgrid::kernel::routing::NetPoint* a, const simgrid::kernel::routing::NetPoint* b) const {
  const Point first = point_of(a), second = point_of(b);
  return first.kind == Kind::gpu && second.kind == Kind::gpu &&
         first.index / gpus_per_node_ == second.index / gpus_per_node_;
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
  const int carrier = nic_of(gpu.index);
  if (own_node || carrier == gpu.index) {
    const simgrid::s4u::SplitDuplexLink* port = own_node ? ports.nvlink : ports.nic;
    append(into, latency, up ? port->get_link_up() : port->get_link_down());
    return;
  }
  // Its NIC detoured: over NVLink to the mate, out of the mate's NIC to the mate's rail, and
  // across the spine to its own rail's switch (CollNet's reduction is per rail: switch i
  // serves GPU i of every node).
  const Ports& mate = gpus_[static_cast<size_t>(carrier)];
  const auto mate_rail = static_cast<size_t>(carrier % gpus_per_node_), gpu_rail = static_cast<size_t>(other.index);
  std::vector<const simgrid::s4u::Link*> way{ports.nvlink->get_link_up(), mate.nvlink->get_link_down(),
                                             mate.nic->get_link_up()};
  if (mate_rail != gpu_rail) {
    if (uplinks_.size() <= std::max(mate_rail, gpu_rail))
      throw std::logic_error("RailZone: a detoured GPU's rail switch behind no rail uplink");
    way.push_back(uplinks_[mate_rail]->get_link_up());
    way.push_back(uplinks_[gpu_rail]->get_link_down());
  }
  if (up) {
    for (const simgrid::s4u::Link* link : way) append(into, latency, link);
    return;
  }
  // (the other way: each link's other half, in reverse)
  const std::vector<const simgrid::s4u::Link*> back{
      ports.nvlink->get_link_down(), mate.nvlink->get_link_up(), mate.nic->get_link_down(),
      mate_rail != gpu_rail ? uplinks_[mate_rail]->get_link_down() : nullptr,
      mate_rail != gpu_rail ? uplinks_[gpu_rail]->get_link_up() : nullptr};
  for (auto link = back.rbegin(); link != back.rend(); ++link)
    if (*link != nullptr) append(into, latency, *link);
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
