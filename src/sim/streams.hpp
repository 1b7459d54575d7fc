#pragma once
// Several collectives of one rank in flight at once (training.streams = k): each runs in an
// actor of its own on the rank's host, on its own Comm tag (Comm::on_tag), and they share
// the network as SimGrid shares it (max-min fairness on every link they cross). The rank's
// worker hands them over in order; one waits while k are still running. With k = 1 each
// runs in the caller, one after the other, exactly as a plain loop would. Any caller that
// runs several collectives on one group at once (the training iteration's buckets,
// asynchronous parameter servers, concurrent communicators) goes through this pool.
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/comm.hpp"

namespace collsim {

// When a collective ran, in simulated seconds.
struct Interval {
  double start = 0, end = 0;
};

// Seconds during which at least one of `intervals` was in flight (overlaps counted once;
// intervals that only touch are added apart).
double busy_time(std::vector<Interval> intervals);

class StreamPool {
public:
  explicit StreamPool(int streams);
  ~StreamPool();
  StreamPool(const StreamPool&) = delete;
  StreamPool& operator=(const StreamPool&) = delete;

  bool concurrent() const { return streams_ > 1; }

  // Runs `collective`, which returns the interval it ran: here with one stream; otherwise,
  // once fewer than k are in flight (rethrowing the failure of one that ended badly), in an
  // actor named `name` on the caller's host.
  void run(const std::string& name, std::function<Interval()> collective);
  // Waits until every collective handed over has ended; rethrows the first failure (with
  // its type: a simgrid::Exception stays one).
  void wait_all();
  // The time at least one of them was in flight, after wait_all (one stream: their times
  // added up in the order they ran).
  double busy() const;
  // Their own times added up, as if one after the other (collectives in flight at once
  // counted each): what the cost model's isolated collectives add up to.
  double added_up() const;

private:
  struct Shared;
  std::shared_ptr<Shared> shared_;  // held by the actors too: one blocked for good outlives the pool
  int streams_;
  double serial_busy_ = 0;
};

// Bucket b's own mailboxes (tag b + 1), for bucket collectives in flight at once: every side
// of a bucket's messages (the ranks, switch and server actors) takes its tag from here.
inline Comm bucket_comm(const Comm& comm, size_t bucket) { return comm.on_tag(static_cast<int>(bucket) + 1); }

// The Comm bucket b's collective runs on in `pool`: its own (bucket_comm) when several run at
// once, nullopt (the caller's comm) with one stream. The ranks and the switch or server actors
// that serve them both call this, so that they cannot disagree on a bucket's mailboxes.
inline std::optional<Comm> bucket_stream_comm(const StreamPool& pool, const Comm& comm, size_t bucket) {
  if (!pool.concurrent()) return std::nullopt;
  return bucket_comm(comm, bucket);
}

}  // namespace collsim
