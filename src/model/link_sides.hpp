#pragma once
// Which ranks a link separates from the others. A link that every late transfer crosses
// while no rank is common to them (a node's NIC slowed: each of its ranks is late with a
// different partner) points at the ranks behind it; a link fault's culprits are those
// ranks too. Routes come from the run's route cache (model/route_cache.hpp). A physical
// link is both halves of a split-duplex one: "x_UP" and "x_DOWN" are "x".
#include <string_view>
#include <vector>

namespace collsim {

class Network;

std::string_view physical_link(std::string_view name);

// The physical links of the route from rank `from` to rank `to`, without repeats.
std::vector<std::string_view> physical_links(const Network& routes, int from, int to);

// Whether the route between `a` and `b` (either way) crosses `physical`.
bool route_crosses(const Network& routes, int a, int b, std::string_view physical);

// Of `ranks`, the smaller side of the cut `physical` makes among them: every route from
// one of them to a rank of the other side crosses it. Empty when the link is not on any
// route from the first rank, does not cut the ranks in two sides, or cuts them evenly.
std::vector<int> ranks_behind(const Network& routes, const std::vector<int>& ranks, std::string_view physical);

// The ranks whose own link `physical` is: the side ranks_behind finds, unless the link is a
// switch link (NetworkLink::switch_link: a leaf's uplink, a rail's uplink), which is the
// fabric's and no rank's even where it is the only way to some (issue #48): then none.
std::vector<int> link_owners(const Network& routes, const std::vector<int>& ranks, std::string_view physical);

}  // namespace collsim
