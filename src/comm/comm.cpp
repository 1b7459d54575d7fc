#include "comm/comm.hpp"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <exception>
#include <fmt/format.h>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <stdexcept>

#include "comm/comm_group.hpp"
#include "comm/post_cost.hpp"

namespace sg4 = simgrid::s4u;

namespace collsim {

// What travels through a mailbox: a copy of the sender's elements (taken at send time, so
// the sender may reuse its buffer once the send completes) and the sender's labels.
struct Packet {
  std::vector<std::byte> data;
  double posted = 0;
  int step = 0;
  const char* phase = "";
  int epoch = 0;
  int round = 0;
  int bucket = -1;
  uint64_t ticket = 0;  // from MessageLog::post
  int64_t first = -1;   // first element carried, in the sender's collective buffer (-1: from elsewhere)
  size_t logical = 0;   // logical elements it stands for (its simulated bytes over the element size)
};

struct PendingTransfer {
  sg4::CommPtr activity;
  bool is_receive = false;
  Packet* packet = nullptr;  // a send's packet, or filled by SimGrid when a receive completes
  View into;                 // where a receive lands
  int peer = 0;              // group rank of the other side
  double posted = 0;
  double bytes = 0;          // simulated bytes (what the recovery watch expects of it)
  WaitWatch* watch = nullptr;
  int world = 0, peer_world = 0;  // world ranks of both sides, for the watch's count of transfers in flight

  // A transfer abandoned by an exception (timeout, failed peer) is cancelled, so that
  // nothing of an abandoned operation stays in flight. Its packet stays with the group
  // (CommGroup::new_packet): the peer may have taken it just before (the sender's view
  // still says STARTED until a wait).
  ~PendingTransfer() {
    // An actor killed with its host (a preempted parameter server's process, its receives
    // posted) unwinds with SimGrid's kill exception in flight, and SimGrid answers each
    // simcall it makes meanwhile by throwing that exception again: out of a destructor
    // during unwinding, std::terminate. A dying actor's transfers die with it (SimGrid
    // cancels them), so nothing is left to settle then.
    if (std::uncaught_exceptions() > 0) {
      try {
        settle();
      } catch (...) {  // NOLINT(bugprone-empty-catch): the kill already unwinding goes on
      }
      return;
    }
    settle();
  }
  void settle() {
    const auto state = cancel && activity ? activity->get_state() : sg4::Activity::State::INITED;
    if (state == sg4::Activity::State::STARTED) {
      // One that moved bytes was on its route, and a fault there touched it all the same
      // (both ends cancel and say so).
      const bool moved = activity->get_remaining() < bytes;
      activity->cancel();
      if (moved) tell_abandoned();
    } else if (state == sg4::Activity::State::FAILED) {
      tell_abandoned();  // broken on its route (a link went down), or started on a route that was down
    }
    if (watch != nullptr) watch->finished(world, peer_world, is_receive);
    // not cancelled and never completed by a wait: the group keeps its handle
    if (!cancel && activity && activity->get_state() == sg4::Activity::State::STARTED && group != nullptr)
      group->keep_abandoned(std::move(activity));
  }
  void tell_abandoned() const {
    if (log != nullptr)
      log->abandoned(is_receive ? peer_world : world, is_receive ? world : peer_world, posted, sg4::Engine::get_clock());
  }
  bool cancel = false;
  MessageLog* log = nullptr;  // under recovery: told of the transfer if it is abandoned
  CommGroup* group = nullptr;  // keeps the handle of one abandoned uncancelled (CommGroup::keep_abandoned)
};

Request::Request() = default;
Request::Request(Request&&) noexcept = default;
Request& Request::operator=(Request&&) noexcept = default;
Request::~Request() = default;

CommGroup::CommGroup(int epoch, std::vector<int> members, MessageLog& log)
    : epoch_(epoch), members_(std::move(members)), log_(&log),
      wait_lists_(members_.size()) {
  last_mailboxes_.resize(members_.size());
}

CommGroup::~CommGroup() = default;

Packet* CommGroup::new_packet() {
  if (spare_packets_.empty()) return packets_.emplace_back(std::make_unique<Packet>()).get();
  Packet* packet = spare_packets_.back();
  spare_packets_.pop_back();
  return packet;
}

sg4::Mailbox* CommGroup::mailbox(int src, int dst) {
  if (sg4::Mailbox* last = last_mailboxes_.find(src, dst)) return last;
  sg4::Mailbox*& slot = mailboxes_[(static_cast<uint64_t>(src) << 32) | static_cast<uint32_t>(dst)];
  if (slot == nullptr) slot = sg4::Mailbox::by_name(fmt::format("e{}:{}>{}", epoch_, mailbox_name(src), mailbox_name(dst)));
  last_mailboxes_.remember(src, dst, slot);
  return slot;
}

sg4::Mailbox* CommGroup::mailbox(int src, int dst, int tag) {
  if (tag == 0) return mailbox(src, dst);
  sg4::Mailbox*& slot = tagged_mailboxes_[{tag, src, dst}];
  if (slot == nullptr) slot = sg4::Mailbox::by_name(fmt::format("e{}:{}>{}#{}", epoch_, mailbox_name(src), mailbox_name(dst), tag));
  return slot;
}

Comm::Comm(CommGroup& group, int rank, int tag) : group_(&group), rank_(rank), size_(group.size()), tag_(tag) {}

Comm Comm::on_tag(int tag) const {
  Comm other(*group_, rank_, tag);
  other.round_ = round_;
  return other;
}

int Comm::locality(int rank) const { return group_->locality(rank); }

int Comm::reducing_switch(SwitchKind kind) const {
  const auto& switches = group_->switches();
  for (size_t s = 0; s < switches.size(); ++s)
    if (switches[s].kind == kind && std::binary_search(switches[s].members.begin(), switches[s].members.end(), rank_))
      return size_ + static_cast<int>(s);
  return -1;
}

const std::vector<int>& Comm::switch_members(int peer) const {
  return group_->switches()[static_cast<size_t>(peer - size_)].members;
}

sg4::Mailbox* Comm::mailbox_to(int dst) {
  if (last_to_.peer != dst) last_to_ = {dst, group_->mailbox(rank_, dst, tag_)};
  return last_to_.mailbox;
}

sg4::Mailbox* Comm::mailbox_from(int src) {
  if (last_from_.peer != src) last_from_ = {src, group_->mailbox(src, rank_, tag_)};
  return last_from_.mailbox;
}

Request Comm::isend(int dst, View data) {
  Request request;
  request.pending_ = std::make_unique<PendingTransfer>();
  post_send(dst, data, *request.pending_);
  return request;
}

void Comm::post_send(int dst, View data, PendingTransfer& pending) {
  if (group_->overhead() > 0) sg4::this_actor::sleep_for(group_->overhead());
  // the transport's price; posting it takes the sender its post overhead before it may leave
  // (a CPU run has none: no world ranks to look up, no post to ask for)
  const MessageCost* cost = group_->message_cost();
  const MessagePrice* price = nullptr;
  if (cost != nullptr) {
    const int from = group_->world_rank(rank_), to = group_->world_rank(dst);
    price = &cost->price_for(from, to, data.logical_bytes());
    const PostCost* posts = group_->post_cost();
    if (const double post = posts == nullptr ? 0 : posts->post_overhead(from, to, data.logical_bytes()); post > 0)
      sg4::this_actor::sleep_for(post);
  }
  const double now = sg4::Engine::get_clock();
  Packet* packet = group_->new_packet();
  packet->data.assign(data.data, data.data + data.bytes());
  packet->posted = now;
  packet->step = step_;
  packet->phase = phase_;
  packet->epoch = group_->epoch();
  packet->round = round_;
  packet->bucket = bucket_;
  const bool inside = data.data >= data_.data && data.data + data.bytes() <= data_.data + data_.bytes() &&
                      data.elem_bytes == data_.elem_bytes && data_.elem_bytes > 0;
  packet->first = inside ? data_first_ + (data.data - data_.data) / static_cast<std::ptrdiff_t>(data_.elem_bytes) : -1;
  packet->logical = data.logical;
  // every message goes into the run's log, a switch's or a server process's too (their
  // endpoints follow the ranks': CommGroup::world_rank)
  packet->ticket = group_->log().post(now);
  pending.peer = dst;
  pending.packet = packet;
  pending.group = group_;
  pending.cancel = group_->cancel_abandoned();
  pending.posted = now;
  const double bytes = data.logical_bytes();
  pending.bytes = bytes;
  watch_transfer(pending);
  if (price == nullptr) {
    pending.activity = mailbox_to(dst)->put_async(packet, static_cast<uint64_t>(bytes));
    return;
  }
  // the wire's bytes, and a channel's ceiling on the message's rate
  pending.activity = mailbox_to(dst)->put_init(packet, static_cast<uint64_t>(price->wire_bytes(bytes)));
  if (std::isfinite(price->rate_cap)) pending.activity->set_rate(price->rate_cap);
  pending.activity->start();
}

void Comm::begin_collective() {
  if (const MessageCost* cost = group_->message_cost(); cost != nullptr && cost->collective_overhead() > 0)
    sg4::this_actor::sleep_for(cost->collective_overhead());
}

void Comm::compute(double seconds) {
  if (seconds > 0) sg4::this_actor::sleep_for(seconds);
}

Request Comm::irecv(int src, View into) {
  Request request;
  request.pending_ = std::make_unique<PendingTransfer>();
  post_receive(src, into, *request.pending_);
  return request;
}

void Comm::post_receive(int src, View into, PendingTransfer& pending) {
  pending.is_receive = true;
  pending.group = group_;
  pending.cancel = group_->cancel_abandoned();
  pending.into = into;
  pending.peer = src;
  pending.posted = sg4::Engine::get_clock();
  pending.bytes = into.logical_bytes();
  watch_transfer(pending);
  pending.activity = mailbox_from(src)->get_async<Packet>(&pending.packet);
}

void Comm::watch_transfer(PendingTransfer& pending) {
  pending.watch = group_->watch();
  if (pending.watch == nullptr) return;
  pending.world = group_->world_rank(rank_);
  pending.peer_world = group_->world_rank(pending.peer);
  if (pending.cancel) pending.log = &group_->log();
  pending.watch->posted(pending.world, pending.peer_world, pending.is_receive);
}

// A parameter server's process (a peer after the ranks, endpoint `me`) has no deadline of its
// own: recovery watches the workers, who wait on it. It waits on its transfer and on the
// coordinator's news of a rebuilt group (WaitWatch::listen), which ends the wait when it
// comes first: the server then serves the new group (sim/server_rebuilds.cpp).
namespace {
void await_as_server(PendingTransfer& pending, WaitWatch& watch, int me, int epoch) {
  sg4::Comm* news = watch.listen(me);
  try {
    if (news == nullptr) {
      pending.activity->wait();
      return;
    }
    const std::vector<sg4::CommPtr> activities{pending.activity, sg4::CommPtr(news)};
    if (sg4::Comm::wait_any(activities) != 0) throw VerdictPending();
  } catch (const simgrid::Exception&) {
    // A push lost (the survivors wait on the server), or a pull to a lost worker (the last
    // round's: the survivors, done, wait for the group, sim/worker.cpp)
    watch.server_transfer_broke(me, pending.peer_world, epoch);
    throw;
  }
}
}  // namespace

// Under recovery a wait has a deadline from what its transfer should cost (the watch
// says how long); passing it is only a suspicion: the wait is reported and goes on. Only
// the coordinator's verdict ends it (it cancels the transfer: the wait throws). Waiting
// with wait_any_for leaves the transfer alive when the time is up (wait_for cancels it).
// Until the first fault strikes, nothing can stall a wait: it waits with no deadline, on
// its transfer and its verdict channel; the strike's watchdog checks it at its deadline.
void Comm::await(PendingTransfer& pending) {
  WaitWatch* watch = group_->watch();
  const int me = group_->world_rank(rank_);
  if (rank_ >= size_) {
    await_as_server(pending, *watch, me, group_->epoch());
    return;
  }
  double limit = watch->begin_wait(me, group_->world_rank(pending.peer), pending.bytes, pending.is_receive,
                                   pending.activity.get(), phase_, step_);
  // A transfer already over (a ring's send whose receiver has it) cannot pass a deadline:
  // a plain wait completes it, without a timer. (It must still be waited on: SimGrid 3.32
  // takes longer and longer to finish transfers that are never waited on or only tested.)
  std::vector<sg4::CommPtr>& activities = group_->wait_list(rank_);
  try {
    if (pending.activity->get_finish_time() >= 0) {
      pending.activity->wait();
    } else {
      activities.assign(1, pending.activity);
      if (watch->unwatched(me)) {
        activities.emplace_back(watch->listen(me));
        limit = -1;  // for ever (SimGrid's wait_any)
      } else if (sg4::Comm* verdict = watch->listen_from_start(me)) {
        activities.emplace_back(verdict);
      }
      for (;;) {
        const ssize_t done = sg4::Comm::wait_any_for(activities, limit);
        if (done == 0) break;
        if (done > 0) throw VerdictPending();
        limit = watch->suspect(me);
        if (activities.size() == 1)
          if (sg4::Comm* verdict = watch->listen(me)) activities.emplace_back(verdict);
      }
    }
  } catch (...) {
    activities.clear();
    watch->end_wait(me);
    throw;
  }
  activities.clear();
  watch->end_wait(me);
}

void Comm::wait(Request& request) { wait_on(*request.pending_); }

void Comm::wait_on(PendingTransfer& pending) {
  group_->note_wait(rank_, pending.peer, pending.is_receive ? "receive from" : "send to", sg4::Engine::get_clock());
  if (group_->watch() != nullptr)
    await(pending);
  else
    pending.activity->wait();
  group_->clear_wait(rank_);
  // The transfer may have finished before this wait began (wait_all waits in order).
  if (pending.is_receive)
    deliver(pending.packet, pending.peer, pending.into, pending.posted, pending.activity->get_finish_time(),
            sg4::Engine::get_clock());
}

// A blocking get is one simcall where get_async + wait are two: the hot path of every
// ring step goes through here. `now`: the clock as the receive is posted.
Packet* Comm::receive_packet(int src, double now) {
  sg4::Mailbox* mailbox = mailbox_from(src);
  group_->note_wait(rank_, src, "receive from", now);
  Packet* packet = mailbox->get<Packet>();
  group_->clear_wait(rank_);
  return packet;
}

// Checks, copies into place and records a message that has arrived, then gives its packet
// back to the group for reuse.
void Comm::deliver(Packet* arrived, int src, View into, double posted, double arrival, double now) {
  auto give_back = [this](Packet* packet) { group_->recycle(packet); };
  std::unique_ptr<Packet, decltype(give_back)> packet(arrived, give_back);
  if (packet->epoch != group_->epoch())
    throw std::logic_error(fmt::format("message of epoch {} delivered in epoch {}", packet->epoch, group_->epoch()));
  if (packet->data.size() != into.bytes() || packet->logical != into.logical)
    throw std::logic_error(fmt::format("rank {} expected {} bytes ({} logical elements) from rank {}, got {} ({})",
                                       rank_, into.bytes(), into.logical, src, packet->data.size(), packet->logical));
  if (!packet->data.empty()) std::memcpy(into.data, packet->data.data(), packet->data.size());
  group_->log().add({group_->world_rank(src), group_->world_rank(rank_), static_cast<uint64_t>(into.logical_bytes()),
                     std::max(packet->posted, posted), arrival, packet->step, packet->phase, packet->epoch, packet->round,
                     packet->first, into.count, packet->bucket},
                    packet->ticket, now);
  // the transport's hand-shake: the receiver holds the message a hop latency after its last byte
  if (const MessageCost* cost = group_->message_cost()) {
    const double held =
        arrival + cost->price_for(group_->world_rank(src), group_->world_rank(rank_), into.logical_bytes()).hop_latency;
    if (held > now) sg4::this_actor::sleep_until(held);
  }
}

void Comm::wait_all(std::vector<Request>& requests) {
  for (Request& request : requests) wait(request);
}

std::vector<size_t> Comm::wait_some(std::vector<Request>& requests) {
  if (group_->watch() != nullptr) throw std::logic_error("wait_some runs without recovery's watch");
  std::vector<sg4::CommPtr> activities;
  for (const Request& request : requests)
    if (request.active()) activities.push_back(request.pending_->activity);
  if (activities.empty()) throw std::logic_error("wait_some: nothing to wait for");
  sg4::Comm::wait_any(activities);
  std::vector<size_t> done;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!requests[i].active() || !requests[i].pending_->activity->test()) continue;
    wait(requests[i]);  // over already: completes it and delivers a receive
    requests[i].pending_.reset();
    done.push_back(i);
  }
  return done;
}

void Comm::send(int dst, View data) {
  PendingTransfer sending;
  post_send(dst, data, sending);
  wait_on(sending);
}

void Comm::recv(int src, View into) {
  if (group_->watch() != nullptr) {  // a deadline that only suspects needs the asynchronous form
    PendingTransfer receiving;
    post_receive(src, into, receiving);
    wait_on(receiving);
    return;
  }
  const double posted = sg4::Engine::get_clock();
  Packet* packet = receive_packet(src, posted);
  const double now = sg4::Engine::get_clock();
  deliver(packet, src, into, posted, now, now);
}

// The blocking forms keep their send on the stack: the hot path of every ring step
// allocates nothing.
void Comm::sendrecv(int dst, View data, int src, View into) {
  PendingTransfer sending;
  post_send(dst, data, sending);
  recv(src, into);
  wait_on(sending);
}

}  // namespace collsim
