#pragma once
// The state that the ranks of one group (one epoch) share: who is in it, the mailboxes
// between them, how carried elements scale to simulated bytes, and the message log.
// Internal to comm/ and sim/: algorithms only ever see Comm.
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "comm/message_cost.hpp"
#include "comm/message_log.hpp"
#include "comm/post_cost.hpp"
#include "comm/switch_ops.hpp"
#include "util/last_pairs.hpp"

#include <simgrid/forward.h>

namespace collsim {

struct Packet;

// Whom a rank is blocked on, for the stall report of a run that never completes.
struct WaitState {
  int peer = -1;             // world rank, -1 when not waiting
  double since = 0;
  const char* what = "";     // "receive from", "send to"
};

// Recovery's watch over the group's waits (sim/recovery_adapter.hpp hands each event to recovery/detector.hpp). Comm asks it
// how long each blocking wait may last before it is *suspicious*; a suspicious wait is
// reported and goes on waiting: only the coordinator's verdict abandons an operation.
class WaitWatch {
public:
  virtual ~WaitWatch() = default;
  // World rank `world` posts a send to (or a receive from) `peer`, or is done with it: the
  // transfers in flight share the links, so the expected times count them.
  virtual void posted(int world, int peer, bool receive) = 0;
  virtual void finished(int world, int peer, bool receive) = 0;
  // `world` blocks on its transfer with `peer` (`activity`, posted at `posted`) in the step
  // the algorithm labelled (`phase`, `step`): returns the seconds after which the wait is
  // suspicious. Throws when a verdict already abandons it.
  virtual double begin_wait(int world, int peer, double bytes, bool receive, simgrid::s4u::Comm* activity,
                            const char* phase, int step) = 0;
  // The wait passed that time: report it; returns the seconds until the next check.
  virtual double suspect(int world) = 0;
  // What a suspicious wait listens to besides its transfer: the coordinator's verdict
  // (nullptr: nothing). When it completes first, the wait is abandoned.
  virtual simgrid::s4u::Comm* listen(int world) = 0;
  // The same from the wait's start (nullptr: only once suspicious).
  virtual simgrid::s4u::Comm* listen_from_start(int world) = 0;
  // Before the first fault strikes nothing can stall a wait: it needs no deadline (true),
  // and waits on its transfer and its verdict channel (listen) alone. A deadline is a timer
  // set and removed at every wait, and a check that fires in a healthy ring (37% of its
  // waits at p = 64) wakes the rank for nothing. The strike hands the waits under way to
  // one watchdog that checks each at its deadline in its stead (RecoveryAdapter).
  virtual bool unwatched(int /*world*/) { return false; }
  // The wait is over (the transfer completed).
  virtual void end_wait(int world) = 0;
  // A parameter server's process (endpoint `world`, no member) lost its transfer with `peer`
  // in the group of `epoch`: reported as a worker reports its own broken transfer.
  virtual void server_transfer_broke(int /*world*/, int /*peer*/, int /*epoch*/) {}
};

// A wait abandoned because the coordinator gave its verdict.
struct VerdictPending : std::exception {
  const char* what() const noexcept override { return "abandoned by the coordinator's verdict"; }
};

class CommGroup {
public:
  CommGroup(int epoch, std::vector<int> members, MessageLog& log);
  ~CommGroup();
  CommGroup(const CommGroup&) = delete;
  CommGroup& operator=(const CommGroup&) = delete;

  int epoch() const { return epoch_; }
  int size() const { return static_cast<int>(members_.size()); }
  // (a switch, from size() on: its endpoint)
  int world_rank(int group_rank) const {
    return group_rank < size() ? members_[group_rank] : switches_[static_cast<size_t>(group_rank - size())].endpoint;
  }
  const std::vector<int>& members() const { return members_; }
  // The group rank of world rank `world` (-1: not a member).
  int group_rank(int world) const {
    for (int g = 0; g < size(); ++g)
      if (members_[static_cast<size_t>(g)] == world) return g;
    return -1;
  }
  MessageLog& log() { return *log_; }

  // The locality group (a platform zone, or a block of collective.group_size ranks) of
  // each member, by group rank: members with the same id are close to each other. All 0
  // (one group) unless set.
  int locality(int group_rank) const { return localities_.empty() ? 0 : localities_[static_cast<size_t>(group_rank)]; }
  void set_localities(std::vector<int> by_group_rank) { localities_ = std::move(by_group_rank); }

  // The per-message overhead o (LogP): a rank spends it before each message leaves, so
  // the messages it posts leave one after another. 0: the pure alpha-beta network.
  double overhead() const { return overhead_; }
  void set_overhead(double seconds) { overhead_ = seconds; }
  // What a message costs beyond its route (a GPU transport's protocol, comm/message_cost.hpp),
  // by world rank; nullptr: nothing.
  const MessageCost* message_cost() const { return message_cost_.get(); }
  // Its posts (comm/post_cost.hpp), looked up once here rather than per message (a cast
  // across its bases costs a GPU run about 0.8% of its instructions); nullptr: none.
  const PostCost* post_cost() const { return post_cost_; }
  void set_message_cost(std::shared_ptr<const MessageCost> cost) {
    message_cost_ = std::move(cost);
    post_cost_ = dynamic_cast<const PostCost*>(message_cost_.get());
  }

  // The switches that reduce in the network (comm/switch_ops.hpp): switch s is peer
  // size() + s of every Comm of the group.
  const std::vector<SwitchPort>& switches() const { return switches_; }
  void set_switches(std::vector<SwitchPort> switches) {
    switches_ = std::move(switches);
    last_mailboxes_.resize(members_.size() + switches_.size());
  }

  // Under recovery, transfers abandoned by a verdict are cancelled so that the group can
  // move on; without it they stay pending, and peers keep waiting as they would for real.
  bool cancel_abandoned() const { return watch_ != nullptr; }
  // The recovery watch (nullptr: waits never time out).
  WaitWatch* watch() const { return watch_; }
  void set_watch(WaitWatch* watch) { watch_ = watch; }

  // One mailbox per ordered (src, dst) pair, named after the epoch so that a message of
  // an abandoned epoch can never be matched in a new one. Looked up once, then cached; a
  // rank's last pair each way is tried first (a ring rank always sends right, hears left).
  simgrid::s4u::Mailbox* mailbox(int src, int dst);
  // The mailbox of the collective tagged `tag` (Comm::on_tag) from src to dst, named after
  // the tag too: collectives in flight at once never match each other's messages.
  simgrid::s4u::Mailbox* mailbox(int src, int dst, int tag);

  // Packets are reused once delivered (their buffers keep their capacity), so that a
  // message costs no allocation. The group owns every packet it made and frees them with
  // itself: one of an abandoned transfer (a send never matched, a receive never waited
  // on) is never given back.
  Packet* new_packet();
  void recycle(Packet* packet) { spare_packets_.push_back(packet); }

  // What a rank's wait blocks on under recovery (its transfer, and the verdict once
  // suspicious), kept from wait to wait so that a wait allocates no list.
  std::vector<simgrid::s4u::CommPtr>& wait_list(int group_rank) { return wait_lists_[static_cast<size_t>(group_rank)]; }

  // The handle of a transfer left running by an exception where nothing cancels it (no
  // recovery watch: its actor killed as a step's recovery stops a stream, or a transfer broken
  // under policy "none"). Kept until the group ends, by when SimGrid has ended the transfer
  // (it cancels a dead actor's activities): s4u::Comm prints a backtrace when the last handle
  // of a running transfer goes, and cancelling from a dying actor aborts.
  void keep_abandoned(simgrid::s4u::CommPtr activity) { abandoned_.push_back(std::move(activity)); }

  // Where ranks note what they block on (indexed by world rank); optional.
  void track_waits(std::vector<WaitState>* waits) { waits_ = waits; }
  void note_wait(int group_rank, int peer_group_rank, const char* what, double now) {
    if (waits_ != nullptr && group_rank < size())
      (*waits_)[static_cast<size_t>(world_rank(group_rank))] = {world_rank(peer_group_rank), now, what};
  }
  void clear_wait(int group_rank) {
    if (waits_ != nullptr && group_rank < size()) (*waits_)[static_cast<size_t>(world_rank(group_rank))].peer = -1;
  }

private:
  // A rank in mailbox names: its world rank; a switch actor by its index, negative (two
  // actors of one switch share its endpoint).
  int mailbox_name(int rank) const { return rank < size() ? world_rank(rank) : size() - 1 - rank; }

  int epoch_;
  std::vector<int> members_;
  std::vector<int> localities_;
  MessageLog* log_;
  WaitWatch* watch_ = nullptr;
  double overhead_ = 0;
  std::shared_ptr<const MessageCost> message_cost_;
  const PostCost* post_cost_ = nullptr;  // message_cost_'s, if it charges posts
  std::vector<SwitchPort> switches_;
  std::unordered_map<uint64_t, simgrid::s4u::Mailbox*> mailboxes_;
  std::map<std::tuple<int, int, int>, simgrid::s4u::Mailbox*> tagged_mailboxes_;  // (tag, src, dst)
  LastPairs<simgrid::s4u::Mailbox> last_mailboxes_;  // by group rank
  std::vector<std::unique_ptr<Packet>> packets_;  // every packet it made
  std::vector<Packet*> spare_packets_;            // those free to reuse
  std::vector<std::vector<simgrid::s4u::CommPtr>> wait_lists_;  // by group rank
  std::vector<simgrid::s4u::CommPtr> abandoned_;                // keep_abandoned
  std::vector<WaitState>* waits_ = nullptr;
};

}  // namespace collsim
