#include "sim/streams.hpp"

#include <algorithm>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Semaphore.hpp>

namespace sg4 = simgrid::s4u;

namespace collsim {

double busy_time(std::vector<Interval> intervals) {
  std::stable_sort(intervals.begin(), intervals.end(),
                   [](const Interval& a, const Interval& b) { return a.start < b.start; });
  double total = 0;
  bool open = false;
  Interval run;  // the overlapping intervals merged so far
  for (const Interval& interval : intervals) {
    if (open && interval.start < run.end) {
      run.end = std::max(run.end, interval.end);
      continue;
    }
    if (open) total += run.end - run.start;
    run = interval;
    open = true;
  }
  if (open) total += run.end - run.start;
  return total;
}

struct StreamPool::Shared {
  sg4::SemaphorePtr free;  // one token per stream not running a collective
  std::exception_ptr failure;
  std::vector<Interval> intervals;
};

StreamPool::StreamPool(int streams) : shared_(std::make_shared<Shared>()), streams_(std::max(1, streams)) {
  if (concurrent()) shared_->free = sg4::Semaphore::create(static_cast<unsigned>(streams_));
}

StreamPool::~StreamPool() = default;

void StreamPool::run(const std::string& name, std::function<Interval()> collective) {
  if (!concurrent()) {
    const Interval ran = collective();
    serial_busy_ += ran.end - ran.start;
    return;
  }
  shared_->free->acquire();
  if (shared_->failure) std::rethrow_exception(shared_->failure);
  const size_t slot = shared_->intervals.size();
  shared_->intervals.emplace_back();
  sg4::Actor::create(name, sg4::this_actor::get_host(), [shared = shared_, slot, collective = std::move(collective)] {
    try {
      shared->intervals[slot] = collective();
    } catch (const simgrid::ForcefulKillException&) {
      throw;  // its host went down: the worker beside it goes too
    } catch (...) {
      if (!shared->failure) shared->failure = std::current_exception();
    }
    shared->free->release();
  });
}

void StreamPool::wait_all() {
  if (!concurrent()) return;
  // Every token back means nothing in flight; a failure comes back with its token.
  for (int held = 0; held < streams_; ++held) {
    shared_->free->acquire();
    if (shared_->failure) std::rethrow_exception(shared_->failure);
  }
  for (int held = 0; held < streams_; ++held) shared_->free->release();
}

double StreamPool::busy() const { return concurrent() ? busy_time(shared_->intervals) : serial_busy_; }

double StreamPool::added_up() const {
  if (!concurrent()) return serial_busy_;
  double total = 0;
  for (const Interval& interval : shared_->intervals) total += interval.end - interval.start;
  return total;
}

}  // namespace collsim
