// The expected times of waits, settled at the end of the instant they began in
// (detector.hpp, Detector::settle).
#include "recovery/detector.hpp"

namespace collsim {

// What `rank`'s wait expects of its transfer with the transfers in flight now: its time,
// and the transfers on its own end's link.
void Detector::expect(RankActivity& rank, int world) {
  const int src = rank.receive ? rank.peer : world, dst = rank.receive ? world : rank.peer;
  rank.expected = expected_transfer(src, dst, rank.bytes);
  const Route& path = route(src, dst);
  if (path.links.empty()) {
    rank.own_link = -1;
  } else {
    rank.own_link = rank.receive ? path.links.back() : path.links.front();
    rank.own_flows =
        std::max(1.0, end_flows(rank, rank.own_link, rank.receive ? path.dst_both_ways : path.src_both_ways, !rank.receive));
  }
}

// Two waits begun at the same instant, each sharing the other's route, were expected alone
// or sharing by which worker ran first (torus:4x2, recursive doubling, rank 3's NIC at 5%:
// ranks 1 and 3 exchange at 1.3176 ms; in one order 3's send expected 106.9 us, in the
// other 211.7 us; the rank was detected 0.2 ms apart and the runs took 7.948 and 9.229 ms).
// Settled once the instant is over, both see both. Only the waits still on, whose loads
// changed after they began, are expected again.
void Detector::settle() {
  const double now = engine_.now();
  if (now <= instant_) return;
  for (const Settling& begun : settling_) {
    RankActivity& rank = activity(begun.world);
    if (begun.version == load_version_ || rank.doing != RankActivity::Doing::waiting || rank.since != instant_) continue;
    expect(rank, begun.world);
    const double due = rank.since + limit(rank.expected, rank.floor) + check_margin_;
    if (due == rank.next_check) continue;
    // The check armed for next_check is stale: a moved-up deadline is checked from beside
    // the worker until then (a wait begun before the first fault has no deadline yet: the
    // strike's watchdog arms it).
    if (due < rank.next_check && fault_struck_) engine_.check_at(begun.world, rank.since, due, rank.next_check);
    rank.stale_check = rank.next_check;
    rank.next_check = due;
  }
  settling_.clear();
  instant_ = now;
}

}  // namespace collsim
