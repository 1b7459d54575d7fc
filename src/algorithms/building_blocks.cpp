// Building blocks that several algorithms share: the fold onto a power of two, recursive
// halving and doubling over blocks, rings (over the whole group or some of its ranks, one
// or several at once), and the pipelined tree phases.
#include <algorithm>
#include <stdexcept>

#include "algorithms/algorithms.hpp"
#include "algorithms/channels.hpp"
#include "algorithms/hierarchy.hpp"

namespace collsim {

bool fold_vector_in(Comm& comm, Buffer& buf, const ReduceOp& op, const PowerOfTwoFold& fold) {
  const int r = comm.rank();
  if (r >= 2 * fold.rem) return true;
  comm.label("fold", 0);
  if (r % 2 == 0) {
    comm.send(r + 1, buf.all());
    return false;
  }
  Buffer partner = buf.scratch(buf.size());
  comm.recv(r - 1, partner.all());
  op.combine(buf.all(), partner.all());
  return true;
}

void unfold_result(Comm& comm, const PowerOfTwoFold& fold, View result) {
  const int r = comm.rank();
  if (r >= 2 * fold.rem) return;
  comm.label("unfold", 0);
  comm.send(r - 1, result);
}

void reduce_scatter_halving(Comm& comm, Buffer& buf, const ReduceOp& op, const PowerOfTwoFold& fold,
                            const std::vector<Chunk>& blocks, const char* phase) {
  const int me = fold.new_rank(comm.rank());
  if (fold.pof2 == 1) return;
  // The first step receives the most: half of all blocks.
  Buffer incoming = buf.scratch(span_of(blocks, me & ~(fold.pof2 / 2 - 1), fold.pof2 / 2).count);
  for (int mask = fold.pof2 / 2, step = 0; mask > 0; mask /= 2, ++step) {
    const int partner = fold.old_rank(me ^ mask);
    // of the 2 mask blocks both still hold, I keep the half with my own block
    const Chunk keep = span_of(blocks, me & ~(mask - 1), mask);
    const Chunk give = span_of(blocks, (me & ~(mask - 1)) ^ mask, mask);
    View partial = incoming.holding(buf.view(keep.offset, keep.count));
    comm.label(phase, step);
    // send the partner my partial sums of its half, receive its partial sums of mine
    comm.sendrecv(partner, buf.view(give.offset, give.count), partner, partial);
    op.combine(buf.view(keep.offset, keep.count), partial);
  }
}

void allgather_doubling(Comm& comm, Buffer& buf, const PowerOfTwoFold& fold, const std::vector<Chunk>& blocks,
                        const char* phase) {
  const int me = fold.new_rank(comm.rank());
  for (int mask = 1, step = 0; mask < fold.pof2; mask *= 2, ++step) {
    const int partner = fold.old_rank(me ^ mask);
    // I hold the mask blocks of my aligned group; the partner holds the neighbouring group
    const Chunk mine = span_of(blocks, me & ~(mask - 1), mask);
    const Chunk theirs = span_of(blocks, (me & ~(mask - 1)) ^ mask, mask);
    comm.label(phase, step);
    comm.sendrecv(partner, buf.view(mine.offset, mine.count), partner, buf.view(theirs.offset, theirs.count));
  }
}

std::vector<RingTask> own_chunk_rings(Comm& comm, size_t count, int channels) {
  std::vector<int> locality;
  for (int r = 0; r < comm.size(); ++r) locality.push_back(comm.locality(r));
  const auto groups = locality_groups(locality);
  std::vector<RingTask> rings;
  for (int c = 0; c < channels; ++c) {
    RingTask ring{channels > 1 ? channel_ring(groups, comm.size(), c) : std::vector<int>{}, 0, {0, count}, c, channels};
    if (channels == 1)
      for (int r = 0; r < comm.size(); ++r) ring.members.push_back(r);
    while (ring.members[static_cast<size_t>(ring.position)] != comm.rank()) ++ring.position;
    rings.push_back(std::move(ring));
  }
  return rings;
}

void ring_allgather(Comm& comm, Buffer& buf, int mine) {
  // the whole group in rank order, turned so that this rank sits at `mine`
  const int p = comm.size();
  RingTask ring{{}, mine, {0, buf.size()}};
  for (int i = 0; i < p; ++i) ring.members.push_back(mod(comm.rank() - mine + i, p));
  rings_allgather(comm, buf, {ring}, "allgather");
}

namespace {

// Chunk `index` (mod the ring's size) of a ring, in the buffer.
View ring_chunk(Buffer& buf, const RingTask& ring, int index) {
  const Chunk c = ring.chunk(index);
  return buf.view(c.offset, c.count);
}

int longest_ring(const std::vector<RingTask>& rings) {
  int steps = 0;
  for (const RingTask& ring : rings) steps = std::max(steps, ring.size() - 1);
  return steps;
}

// One step of every ring still running (a ring of m members runs m-1 steps): send
// outgoing(j) to ring j's right neighbour and receive incoming(j) from its left, all at
// once. A single ring uses sendrecv (one simcall fewer per message). Sends to the same peer
// are posted in ring order, and so are the peer's receives (both sides list their rings
// in the same order), so that the mailbox matches them in order.
template <typename Outgoing, typename Incoming>
void ring_step(Comm& comm, const std::vector<RingTask>& rings, int step, Outgoing outgoing, Incoming incoming) {
  if (rings.size() == 1) {
    if (step < rings[0].size() - 1) comm.sendrecv(rings[0].right(), outgoing(0), rings[0].left(), incoming(0));
    return;
  }
  std::vector<Request> pending;
  for (size_t j = 0; j < rings.size(); ++j) {
    if (step >= rings[j].size() - 1) continue;
    pending.push_back(comm.isend(rings[j].right(), outgoing(j)));
    pending.push_back(comm.irecv(rings[j].left(), incoming(j)));
  }
  comm.wait_all(pending);
}

}  // namespace

void rings_reduce_scatter(Comm& comm, Buffer& buf, const ReduceOp& op, const std::vector<RingTask>& rings,
                          const char* phase) {
  auto chunk = [&](size_t j, int index) { return ring_chunk(buf, rings[j], index); };
  std::vector<Buffer> partials;
  for (const RingTask& ring : rings) partials.push_back(buf.scratch(ring.largest().count));
  for (int step = 0; step < longest_ring(rings); ++step) {
    comm.label(phase, step);
    // after step s, member i holds the partial result of chunk i - s - 2 over s + 2 members
    auto mine = [&](size_t j) { return rings[j].position; };
    auto partial = [&](size_t j) { return partials[j].holding(chunk(j, mine(j) - step - 2)); };
    // send my partial of chunk i - s - 1 to the right, receive the left's of chunk i - s - 2
    ring_step(comm, rings, step, [&](size_t j) { return chunk(j, mine(j) - step - 1); }, partial);
    for (size_t j = 0; j < rings.size(); ++j)
      if (step < rings[j].size() - 1) op.combine(chunk(j, mine(j) - step - 2), partial(j));
  }
  // now member i holds chunk i reduced over its ring
}

void rings_allgather(Comm& comm, Buffer& buf, const std::vector<RingTask>& rings, const char* phase) {
  auto chunk = [&](size_t j, int index) { return ring_chunk(buf, rings[j], index); };
  for (int step = 0; step < longest_ring(rings); ++step) {
    comm.label(phase, step);
    // pass on the chunk received last step (my own at first), receive the next from the left
    ring_step(comm, rings, step, [&](size_t j) { return chunk(j, rings[j].position - step); },
              [&](size_t j) { return chunk(j, rings[j].position - step - 1); });
  }
}

namespace {

// One message of a rank's part of a tree phase.
struct TreeTransfer {
  int step;
  bool send;
  int peer;
  Chunk piece;
};

}  // namespace

void run_tree_phase(Comm& comm, Buffer& buf, const ReduceOp* op, const TreeSchedule& schedule,
                    const std::vector<std::vector<Chunk>>& segments, TreePhase phase) {
  const bool down = phase == TreePhase::broadcast;
  const auto me = static_cast<size_t>(comm.rank());
  std::vector<size_t> counts;
  for (const auto& s : segments) counts.push_back(s.size());
  const int steps = schedule.steps(counts);
  // Every message this rank takes part in, at its step: towards the parent and the children.
  std::vector<TreeTransfer> transfers;
  size_t largest = 0;
  for (size_t t = 0; t < schedule.trees.size(); ++t) {
    const Tree& tree = schedule.trees[t];
    const int k = static_cast<int>(segments[t].size());
    auto step_of = [&](int first, int j) { return down ? first + 2 * j : steps - 1 - (first + 2 * (k - 1 - j)); };
    for (int j = 0; j < k; ++j) {
      const Chunk& piece = segments[t][static_cast<size_t>(j)];
      largest = std::max(largest, piece.count);
      if (tree.parent[me] >= 0)
        transfers.push_back({step_of(schedule.first_step[t][me], j), !down, tree.parent[me], piece});
      for (int child : tree.children[me])
        transfers.push_back({step_of(schedule.first_step[t][static_cast<size_t>(child)], j), down, child, piece});
    }
  }
  std::stable_sort(transfers.begin(), transfers.end(),
                   [](const TreeTransfer& a, const TreeTransfer& b) { return a.step < b.step; });

  Buffer incoming = buf.scratch(down ? 0 : largest);
  for (size_t i = 0; i < transfers.size();) {
    // one step: at most one send and one receive, posted together
    const int step = transfers[i].step;
    comm.label(down ? "broadcast" : "reduce", step);
    std::vector<Request> pending;
    const TreeTransfer* received = nullptr;
    int sends = 0;
    for (; i < transfers.size() && transfers[i].step == step; ++i) {
      const TreeTransfer& x = transfers[i];
      View piece = buf.view(x.piece.offset, x.piece.count);
      if (x.send) {
        ++sends;
        pending.push_back(comm.isend(x.peer, piece));
      } else {
        if (received != nullptr) throw std::logic_error("tree schedule: two receives in one step");
        received = &x;
        pending.push_back(comm.irecv(x.peer, down ? piece : incoming.holding(piece)));
      }
    }
    if (sends > 1) throw std::logic_error("tree schedule: two sends in one step");
    comm.wait_all(pending);
    // going up, fold the child's partial result into mine
    if (!down && received != nullptr) {
      const View mine = buf.view(received->piece.offset, received->piece.count);
      op->combine(mine, incoming.holding(mine));
    }
  }
}

}  // namespace collsim
