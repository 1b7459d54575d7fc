#pragma once
// The state that the ranks of one group (one epoch) share: who is in it, the mailboxes
// between them, how carried elements scale to simulated bytes, and the message log.
// Internal to comm/ and sim/: algorithms only ever see Comm.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "comm/message_log.hpp"

namespace simgrid::s4u {
class Mailbox;
}

namespace collsim {

struct Packet;

// Whom a rank is blocked on, for the stall report of a run that never completes.
struct WaitState {
  int peer = -1;             // world rank, -1 when not waiting
  double since = 0;
  const char* what = "";     // "receive from", "send to"
};

class CommGroup {
public:
  CommGroup(int epoch, std::vector<int> members, double bytes_per_elem, MessageLog& log);
  ~CommGroup();
  CommGroup(const CommGroup&) = delete;
  CommGroup& operator=(const CommGroup&) = delete;

  int epoch() const { return epoch_; }
  int size() const { return static_cast<int>(members_.size()); }
  int world_rank(int group_rank) const { return members_[group_rank]; }
  const std::vector<int>& members() const { return members_; }
  double bytes_per_elem() const { return bytes_per_elem_; }
  MessageLog& log() { return *log_; }

  // The locality group (a platform zone, or a block of collective.group_size ranks) of
  // each member, by group rank: members with the same id are close to each other. All 0
  // (one group) unless set.
  int locality(int group_rank) const { return localities_.empty() ? 0 : localities_[static_cast<size_t>(group_rank)]; }
  void set_localities(std::vector<int> by_group_rank) { localities_ = std::move(by_group_rank); }

  // Waits longer than this throw a timeout (recovery); < 0 waits forever.
  double timeout() const { return timeout_; }
  void set_timeout(double seconds) { timeout_ = seconds; }
  // The per-message overhead o (LogP): a rank spends it before each message leaves, so
  // the messages it posts leave one after another. 0: the pure alpha-beta network.
  double overhead() const { return overhead_; }
  void set_overhead(double seconds) { overhead_ = seconds; }
  // Under recovery, transfers abandoned by a failure are cancelled so that the group can
  // move on; without it they stay pending, and peers keep waiting as they would for real.
  bool cancel_abandoned() const { return timeout_ >= 0; }

  // One mailbox per ordered (src, dst) pair, named after the epoch so that a message of
  // an abandoned epoch can never be matched in a new one. Looked up once, then cached; a
  // rank's last pair each way is tried first (a ring rank always sends right, hears left).
  simgrid::s4u::Mailbox* mailbox(int src, int dst);

  // Packets are reused once delivered (their buffers keep their capacity), so that a
  // message costs no allocation.
  Packet* new_packet();
  void recycle(Packet* packet) { spare_packets_.push_back(packet); }

  // Where ranks note what they block on (indexed by world rank); optional.
  void track_waits(std::vector<WaitState>* waits) { waits_ = waits; }
  void note_wait(int group_rank, int peer_group_rank, const char* what, double now) {
    if (waits_ != nullptr) (*waits_)[static_cast<size_t>(world_rank(group_rank))] = {world_rank(peer_group_rank), now, what};
  }
  void clear_wait(int group_rank) {
    if (waits_ != nullptr) (*waits_)[static_cast<size_t>(world_rank(group_rank))].peer = -1;
  }

private:
  int epoch_;
  std::vector<int> members_;
  std::vector<int> localities_;
  double bytes_per_elem_;
  MessageLog* log_;
  double timeout_ = -1;
  double overhead_ = 0;
  struct LastMailbox {
    int peer = -1;
    simgrid::s4u::Mailbox* mailbox = nullptr;
  };
  std::unordered_map<uint64_t, simgrid::s4u::Mailbox*> mailboxes_;
  std::vector<LastMailbox> last_sent_, last_received_;  // by group rank
  std::vector<Packet*> spare_packets_;
  std::vector<WaitState>* waits_ = nullptr;
};

}  // namespace collsim
