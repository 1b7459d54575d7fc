#pragma once
// Comm: the only interface algorithms use. Ranks, neighbours, and point-to-point
// transfers of buffer views, blocking or asynchronous. Every message is recorded with
// the phase and step the sender labelled it with. No host or SimGrid call here (a rank
// only remembers its last mailboxes, as pointers).
#include <memory>
#include <vector>

#include "comm/buffer.hpp"
#include "comm/switch_ops.hpp"

namespace simgrid::s4u {
class Mailbox;
}

namespace collsim {

class CommGroup;
struct Packet;
struct PendingTransfer;

// An asynchronous send or receive in flight; complete it with Comm::wait.
class Request {
public:
  Request();
  Request(Request&&) noexcept;
  Request& operator=(Request&&) noexcept;
  ~Request();

  // Not yet completed by a wait.
  bool active() const { return pending_ != nullptr; }

private:
  friend class Comm;
  std::unique_ptr<PendingTransfer> pending_;
};

class Comm {
public:
  // `tag` keeps the messages of one collective apart from those of others in flight at the
  // same time on the same group (training.streams: bucket collectives at once): each tag has
  // its own mailboxes between every pair of ranks. 0: the group's one collective at a time.
  Comm(CommGroup& group, int rank, int tag = 0);

  // The same rank of the same group, on its own mailboxes (`tag`, not 0): for a collective
  // that runs beside this one, in an actor of its own.
  Comm on_tag(int tag) const;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int left() const { return (rank_ + size() - 1) % size(); }
  int right() const { return (rank_ + 1) % size(); }
  // Ranks with the same locality id are close to each other (the same platform zone, or
  // the same block of collective.group_size ranks); hierarchical algorithms group by it.
  int locality(int rank) const;

  // The switch that reduces in the network for this rank (comm/switch_ops.hpp: its node's
  // NVSwitch, its rail's InfiniBand switch) as a peer (size() and above), or -1: none.
  int reducing_switch(SwitchKind kind) const;
  // The ranks the switch `peer` serves, in rank order.
  const std::vector<int>& switch_members(int peer) const;

  // Names the phase and step of the messages sent from now on (for traces and pictures).
  // `phase` must be a string literal.
  void label(const char* phase, int step) {
    phase_ = phase;
    step_ = step;
  }

  // Which training round the messages sent from now on belong to (set by the worker loop).
  void set_round(int round) { round_ = round; }
  // Layered training: the gradient bucket whose collective sends from now on (-1: none).
  void set_bucket(int bucket) { bucket_ = bucket; }

  // The rank's buffer of the collective. A message sent from inside it records which of its
  // elements it carries (the trace's `elements`): the step-through draws that fact instead
  // of guessing it. Every rank lays out the vector alike, so the receiver's elements are the
  // same ones (alltoall aside, whose blocks change place). `whole` may be a copy of a slice
  // of the rank's vector starting at element `first` (a gradient bucket).
  void set_data(View whole, size_t first = 0) {
    data_ = whole;
    data_first_ = static_cast<int64_t>(first);
  }

  void send(int dst, View data);
  void recv(int src, View into);
  // Sends to dst and receives from src at the same time; returns when both are done.
  void sendrecv(int dst, View data, int src, View into);

  // Starts a collective: the transport's per-collective overhead (a GPU kernel's launch,
  // comm/message_cost.hpp), nothing without one. The worker calls it before each collective.
  void begin_collective();

  // The rank (or a server peer) works on its CPU for this long: a parameter server's
  // handling of the messages it received or sends (collective.parameter_server).
  void compute(double seconds);

  Request isend(int dst, View data);
  Request irecv(int src, View into);
  void wait(Request& request);
  void wait_all(std::vector<Request>& requests);
  // Waits until at least one of the active `requests` has completed, then completes every
  // one that has by now (delivering the receives) and returns their indices in order; each
  // is then inactive. A server serving whoever pushes first (asynchronous parameter
  // servers, sim/async_servers.cpp). Not under recovery's watch, which it never runs with.
  std::vector<size_t> wait_some(std::vector<Request>& requests);

private:
  void post_send(int dst, View data, PendingTransfer& pending);
  void post_receive(int src, View into, PendingTransfer& pending);
  void wait_on(PendingTransfer& pending);
  Packet* receive_packet(int src, double now);
  void watch_transfer(PendingTransfer& pending);
  void await(PendingTransfer& pending);
  void deliver(Packet* packet, int src, View into, double posted, double arrival, double now);
  simgrid::s4u::Mailbox* mailbox_to(int dst);
  simgrid::s4u::Mailbox* mailbox_from(int src);

  CommGroup* group_;
  int rank_;
  int size_;  // the group's, fixed for its epoch
  int tag_ = 0;
  const char* phase_ = "collective";
  int step_ = 0;
  int round_ = 0;
  int bucket_ = -1;
  View data_;
  int64_t data_first_ = 0;
  // The mailboxes of this rank's last send and last receive (a ring rank always sends right
  // and hears left): kept here, beside what every message reads anyway, they cost a message
  // no look-up in the group's tables and no cache line of its own.
  struct LastMailbox {
    int peer = -1;
    simgrid::s4u::Mailbox* mailbox = nullptr;
  };
  LastMailbox last_to_, last_from_;
};

}  // namespace collsim
