// NCCL's alltoall as nccl-tests' alltoall_perf runs it: one ncclGroup holding a ncclSend and a
// ncclRecv per peer, which NCCL runs point to point (no tuner, no algorithm to choose). Its
// planner walks the peers in NCCL's p2p schedule (nccl_p2p.hpp), splits each peer's block
// into parts, one per p2p channel (args.channels: NCCL's nChannels of the op, addP2pToPlan),
// and keeps up to maxConcurrent peers in flight at once (args.fifo: p2pnChannels / parts x
// NCCL_MAX_DEV_WORK_P2P_PER_BATCH, src/enqueue.cc); the next peers wait until those are done,
// as a channel runs its work batches one after the other. With PXN (the platform's routes) a
// block for another node leaves through the NIC on its receiver's rail, reached over NVLink.
// Each rank sends (p-1)/p n; the NICs carry (N-1)/N of it.
#include <algorithm>

#include "algorithms/algorithms.hpp"
#include "algorithms/nccl_p2p.hpp"
#include "algorithms/schedules.hpp"

namespace collsim {

namespace {
// Part `index` of `parts` of a block, in carried and in logical elements alike (NCCL's
// ncclP2pPartBounds cuts a peer's bytes into nParts parts).
View part_of(View block, int parts, int index) {
  const Chunk carried = even_chunk(block.count, parts, index), logical = even_chunk(block.logical, parts, index);
  return {block.data + carried.offset * block.elem_bytes, carried.count, block.elem_bytes, logical.count};
}
}  // namespace

// nccl-alltoall-begin
void alltoall_nccl(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size(), r = comm.rank();
  std::vector<int> locality;
  for (int i = 0; i < p; ++i) locality.push_back(comm.locality(i));
  const std::vector<P2pRound> rounds = nccl_p2p_schedule(locality, p, r);
  const int parts = std::max(1, args.channels), at_once = std::max(1, args.fifo);
  Buffer out = buf;  // round 0 is the rank itself: its own block stays
  for (int first = 1; first < p; first += at_once) {
    const int end = std::min(p, first + at_once);
    comm.label("exchange", (first - 1) / at_once);
    std::vector<Request> transfers;
    // receive from the round's receive peer, send to its send peer, every part at once
    for (int i = first; i < end; ++i)
      for (int part = 0; part < parts; ++part)
        transfers.push_back(comm.irecv(rounds[i].recv, part_of(out.block(p, rounds[i].recv), parts, part)));
    for (int i = first; i < end; ++i)
      for (int part = 0; part < parts; ++part)
        transfers.push_back(comm.isend(rounds[i].send, part_of(buf.block(p, rounds[i].send), parts, part)));
    comm.wait_all(transfers);
  }
  buf = std::move(out);
}
// nccl-alltoall-end

// One step per group of `fifo` rounds; each rank sends its parts to the round's send peer.
Schedule schedule_alltoall_nccl(const ModelInput& in) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  // a rank's next peers wait only for its own transfers
  schedule.mark_rank_by_rank();
  const int parts = std::max(1, in.channels), at_once = std::max(1, in.fifo);
  std::vector<std::vector<P2pRound>> rounds;
  for (int r = 0; r < in.p; ++r) rounds.push_back(nccl_p2p_schedule(in.locality, in.p, r));
  for (int first = 1; first < in.p; first += at_once) {
    Step& step = schedule.step();
    for (int r = 0; r < in.p; ++r)
      for (int i = first; i < std::min(in.p, first + at_once); ++i) {
        const int to = rounds[static_cast<size_t>(r)][static_cast<size_t>(i)].send;
        const size_t block = alltoall_block(in.elems, in.p, to).count;
        for (int part = 0; part < parts; ++part) step.send(r, to, in.bytes(even_chunk(block, parts, part).count));
      }
  }
  return schedule;
}

}  // namespace collsim
