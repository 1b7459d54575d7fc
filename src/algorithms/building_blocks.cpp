// Building blocks that several algorithms share: the fold onto a power of two, recursive
// halving and doubling over blocks, the ring allgather, and the pipelined tree phases.
#include <algorithm>
#include <stdexcept>

#include "algorithms/algorithms.hpp"

namespace collsim {

bool fold_vector_in(Comm& comm, Buffer& buf, const ReduceOp& op, const PowerOfTwoFold& fold) {
  const int r = comm.rank();
  if (r >= 2 * fold.rem) return true;
  comm.label("fold", 0);
  if (r % 2 == 0) {
    comm.send(r + 1, buf.all());
    return false;
  }
  Buffer partner(buf.dtype(), buf.size());
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
                            const std::vector<Chunk>& blocks) {
  const int me = fold.new_rank(comm.rank());
  if (fold.pof2 == 1) return;
  // The first step receives the most: half of all blocks.
  Buffer incoming(buf.dtype(), span_of(blocks, me & ~(fold.pof2 / 2 - 1), fold.pof2 / 2).count);
  for (int mask = fold.pof2 / 2, step = 0; mask > 0; mask /= 2, ++step) {
    const int partner = fold.old_rank(me ^ mask);
    // of the 2 mask blocks both still hold, I keep the half with my own block
    const Chunk keep = span_of(blocks, me & ~(mask - 1), mask);
    const Chunk give = span_of(blocks, (me & ~(mask - 1)) ^ mask, mask);
    View partial = incoming.view(0, keep.count);
    comm.label("reduce-scatter", step);
    // send the partner my partial sums of its half, receive its partial sums of mine
    comm.sendrecv(partner, buf.view(give.offset, give.count), partner, partial);
    op.combine(buf.view(keep.offset, keep.count), partial);
  }
}

void allgather_doubling(Comm& comm, Buffer& buf, const PowerOfTwoFold& fold, const std::vector<Chunk>& blocks) {
  const int me = fold.new_rank(comm.rank());
  for (int mask = 1, step = 0; mask < fold.pof2; mask *= 2, ++step) {
    const int partner = fold.old_rank(me ^ mask);
    // I hold the mask blocks of my aligned group; the partner holds the neighbouring group
    const Chunk mine = span_of(blocks, me & ~(mask - 1), mask);
    const Chunk theirs = span_of(blocks, (me & ~(mask - 1)) ^ mask, mask);
    comm.label("allgather", step);
    comm.sendrecv(partner, buf.view(mine.offset, mine.count), partner, buf.view(theirs.offset, theirs.count));
  }
}

void ring_allgather(Comm& comm, Buffer& buf, const std::vector<Chunk>& chunks, int mine) {
  const int p = comm.size();
  auto chunk = [&](int index) { return buf.view(chunks[index].offset, chunks[index].count); };
  for (int step = 0; step < p - 1; ++step) {
    comm.label("allgather", step);
    // pass on the chunk received last step (my own at first), receive the next from the left
    comm.sendrecv(comm.right(), chunk(mod(mine - step, p)), comm.left(), chunk(mod(mine - step - 1, p)));
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

  Buffer incoming(buf.dtype(), down ? 0 : largest);
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
        pending.push_back(comm.irecv(x.peer, down ? piece : incoming.view(0, x.piece.count)));
      }
    }
    if (sends > 1) throw std::logic_error("tree schedule: two sends in one step");
    comm.wait_all(pending);
    // going up, fold the child's partial result into mine
    if (!down && received != nullptr)
      op->combine(buf.view(received->piece.offset, received->piece.count), incoming.view(0, received->piece.count));
  }
}

}  // namespace collsim
