#pragma once
// Identical collectives simulated once (training.replay, docs/training.md#replay). A
// training iteration runs many bucket collectives that differ only in when they start;
// when one runs alone on the network and matches one simulated alone before, each rank
// takes the recorded duration, the log takes the recorded messages (shifted in time), and
// no message goes through SimGrid. The data is still reduced (in rank order) and verified.
//
// The rule, decided once per collective at its first rank's entry, with every rank's
// declared entry time at hand:
//  - alone at its start: every rank of the group has left its previous collective and said
//    when it enters this one (so no transfer is in flight: one group, one stream, no
//    recovery, no switch or server actors: replay is off for the run otherwise). A bucket
//    queued behind the one before (ready before it ended) is entered as each rank leaves
//    that one: alone when they all leave at one instant, and the decision waits for the
//    instant's last scheduling round to know;
//  - alone to its end: from the recorded durations, no rank can start its next collective
//    (declared: the next bucket's ready time) before the last rank leaves this one;
//  - the same shape: algorithm, logical layout (the carried one changes no time, nor this
//    choice), launch time, and every rank's entry relative to the first;
//  - its data ready: every rank ends after the last one entered;
//  - clear of faults: none in effect, none striking or ending from its start to its end, and
//    the record made since the last fault changed the network (plan_faults, fault_changed).
// A record is made only from a collective that was alone from its start to its end. It
// keeps what the collective's messages added to the log (MessageLog::begin_capture: per
// step, rank and link, and the first messages the store keeps), not every message: a
// replay costs its steps, ranks and links, whatever its messages.
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <simgrid/forward.h>

#include "comm/buffer.hpp"
#include "comm/message_log.hpp"
#include "comm/reduce_op.hpp"

namespace collsim {

struct AlgorithmInfo;

// What a collective is, as far as its time and its messages go (its start aside).
struct ReplayShape {
  const AlgorithmInfo* algorithm = nullptr;
  CarriedMap map;          // the bucket's logical and carried layout
  double launch = 0;       // the framework's launch seconds before it
  int64_t first = 0;       // its first carried element in the rank's vector (messages' `first`)
  int round = 0, bucket = 0;
};

class CollectiveReplay {
public:
  // `ranks`: the one group's size. `why_off`: empty when replay may run, else the reason.
  CollectiveReplay(int ranks, std::string why_off, MessageLog& log, OpKind op, Dtype dtype);
  ~CollectiveReplay();

  bool enabled() const { return why_off_.empty(); }
  const std::string& why_off() const { return why_off_; }
  int replayed() const { return replayed_; }
  int simulated() const { return simulated_; }

  // A rank done with its previous collective says when it enters its next one and the
  // earliest it may enter the one after: at `next_earliest` (-infinity: unknown), and at
  // least `next_gap` after its own end in this one (a round's computation; +infinity: it
  // enters none).
  void declare(int rank, double entry, double next_earliest = -std::numeric_limits<double>::infinity(),
               double next_gap = 0);
  // At the rank's entry (now): its end time when the collective is replayed (the rank then
  // holds the result in `bucket` once it has slept until then), or nothing: simulate it.
  std::optional<double> enter(int rank, const ReplayShape& shape, Buffer& bucket);
  // After a simulated collective: the rank left it now.
  void leave(int rank);

  // Faults (sim/faults.cpp). Each fault applied or undone changes the network: a record made
  // before it matches no collective after it, and while a fault is in effect nothing is
  // replayed or recorded (its links' traffic, its host's work are the fault's effects).
  // `times`: when the faults planned at a time strike or end, which no replayed collective
  // may span. (A fault at a round strikes when the first rank starts it: after the last
  // collective of the round before has ended on every rank, as "alone to its end" demands
  // of a collective whose ranks declared no next entry.)
  void plan_faults(std::vector<double> times);
  // A fault applied (+1) or undone (-1) now; `undone_at`: when an applied one ends (-1: never, or not known).
  void fault_changed(int in_effect, double undone_at = -1);

private:
  struct Instance;
  struct Record;
  Instance& instance(int64_t seq);
  bool all_declared(int64_t seq) const;
  void await_this_instant(const Instance& inst, int64_t seq);
  void decide(Instance& inst, const ReplayShape& shape);
  const Record* find(const ReplayShape& shape, const std::vector<double>& offsets) const;
  bool fits(const Instance& inst, const Record& record) const;
  void start_replay(Instance& inst, const Record& record, const ReplayShape& shape);
  void reduce_data(Instance& inst) const;
  void finish_record(Instance& inst, int64_t seq);
  bool clear_of_faults(const Instance& inst, const Record& record) const;

  struct Declared {
    int64_t seq = -1;
    double entry = 0, next = 0, gap = 0;
  };
  struct Entered {
    int64_t seq = -1;
    double at = 0;
  };
  int ranks_;
  std::string why_off_;
  MessageLog* log_;
  ReduceOp op_;  // without a cost: the replay's own reduction takes no simulated time
  std::vector<int64_t> next_seq_;     // by rank: the index of its next collective
  std::vector<Declared> declared_;    // by rank: its next collective
  std::vector<Entered> entered_;      // by rank: its last collective
  std::vector<int> declared_count_;   // by seq: the ranks that declared it
  std::map<int64_t, std::unique_ptr<Instance>> live_;  // collectives some rank has entered and not every rank left
  std::vector<std::unique_ptr<Record>> records_;
  int replayed_ = 0, simulated_ = 0;
  int64_t events_ = 0;  // declarations and leaves so far (await_this_instant)
  simgrid::s4u::MutexPtr instant_lock_;
  simgrid::s4u::ConditionVariablePtr instant_;  // never notified: waited on with a timeout of zero
  int64_t network_version_ = 0;           // faults applied or undone so far
  int faults_in_effect_ = 0;
  std::vector<double> fault_times_;       // when faults strike or end (planned, or known once applied)
};

}  // namespace collsim
