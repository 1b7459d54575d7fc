#pragma once
// The state that the ranks of one group (one epoch) share: who is in it, the mailboxes
// between them, how carried elements scale to simulated bytes, and the message log.
// Internal to comm/ and sim/: algorithms only ever see Comm.
#include <string>
#include <vector>

#include "comm/message_log.hpp"

namespace simgrid::s4u {
class Mailbox;
}

namespace collsim {

class CommGroup {
public:
  CommGroup(int epoch, std::vector<int> members, double bytes_per_elem, MessageLog& log);

  int epoch() const { return epoch_; }
  int size() const { return static_cast<int>(members_.size()); }
  int world_rank(int group_rank) const { return members_[group_rank]; }
  double bytes_per_elem() const { return bytes_per_elem_; }
  MessageLog& log() { return *log_; }

  // Waits longer than this throw a timeout (recovery); < 0 waits forever.
  double timeout() const { return timeout_; }
  void set_timeout(double seconds) { timeout_ = seconds; }

  // One mailbox per ordered (src, dst) pair, named after the epoch so that a message of
  // an abandoned epoch can never be matched in a new one. Looked up once, then cached.
  simgrid::s4u::Mailbox* mailbox(int src, int dst);

private:
  int epoch_;
  std::vector<int> members_;
  double bytes_per_elem_;
  MessageLog* log_;
  double timeout_ = -1;
  std::vector<simgrid::s4u::Mailbox*> mailboxes_;
};

}  // namespace collsim
