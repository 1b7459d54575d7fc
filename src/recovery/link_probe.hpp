#pragma once
// Probes that settle a pair (recovery rule 5b, docs/recovery.md). When the one late
// transfer runs from rank s to rank r through a link of each that nothing else crosses (a
// ring on rail:8:8 crosses a node boundary only from GPU 7 to the next node's GPU 0),
// waiting for more evidence brings none: the same transfer stays late, round after round.
// The coordinator then measures each end's own link with a transfer of its own: s to a
// third member (a witness) across s's link, the witness to r across r's. A probe past its
// deadline names its end; both or neither on time leave the pair undecided. Which links and
// witnesses are here; the probe transfers themselves are the engine's (EnginePort::probe).
#include <optional>
#include <string_view>
#include <vector>

namespace collsim {

class Network;

// A link of `end`'s on the route between `from` and `to`: one that cuts the fewest members
// off from the others, `end` among them and the route's other end not (a node's NIC), or
// one that carries `end`'s transfers and nobody else's (a GPU's NIC on a rail, reached by
// its node's other GPUs through NVLink: side {end}). None on a torus, whose links carry
// others' transfers in transit. (The second test reads every pair's route: O(p^2).)
struct OwnLink {
  std::string_view link;  // physical (both halves of a split-duplex link)
  std::vector<int> side;  // the members it cuts off, `end` among them
};
std::optional<OwnLink> own_link(const Network& routes, const std::vector<int>& members, int from, int to, int end);

// The nearest member (fewest links) on neither side whose route with `end` crosses
// `end`'s link, and none of the physical links `avoid` but that one: a probe measures the
// end's own link, never a switch link beyond it that the late transfer crossed too (on
// dragonfly:4:4:8 a witness across a slow global link made the probe of a healthy rank's
// NIC late, and the rank was dropped).
std::optional<int> witness(const Network& routes, const std::vector<int>& members, int end, const OwnLink& link,
                           const std::vector<int>& other_side, const std::vector<std::string_view>& avoid = {});

// On a torus no end owns a link (rule 5c): the halves of the late route from `from` to `to`
// are measured apart instead. The first member (neither end) whose route from `from` leaves
// by the route's first half (`out_end`), or whose route into `to` enters by its last half,
// and crosses no other half of the late route.
std::optional<int> half_witness(const Network& routes, const std::vector<int>& members, int from, int to,
                                bool out_end);

// The members one link away from `end` (a route of one half), with that half: into `end`
// (`into`) or out of it.
std::vector<std::pair<int, int>> next_door(const Network& routes, const std::vector<int>& members, int end, bool into);

}  // namespace collsim
