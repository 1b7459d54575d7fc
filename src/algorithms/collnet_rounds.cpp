#include "algorithms/collnet_rounds.hpp"

#include <algorithm>

#include "algorithms/collnet_plan.hpp"
#include "algorithms/pipelined_rounds.hpp"

namespace collsim {

namespace {

// A hop through the switch: waited for as late as NCCL's FIFO lets the GPU run ahead.
CollNetPlan plan_of(const std::vector<int>& locality, size_t count, size_t chunk_elems, bool chain, int lanes, int fifo) {
  return CollNetPlan(locality, count, chunk_elems, chain, lanes, std::max(0, fifo - 1));
}

}  // namespace

void run_collnet_rank(Comm& comm, Buffer& buf, const CollectiveArgs& args, bool chain) {
  if (comm.size() == 1) return;
  const CollNetPlan plan = plan_of(localities_of(comm), buf.size(), args.segment_elems, chain, args.channels, args.fifo);
  const int rail_switch = comm.reducing_switch(SwitchKind::network);
  PlannedSide side = plan_side(plan.messages_of(comm.rank()), [&](const CollNetPlan::Message& m, PlannedSide& s, size_t wait) {
    const View view = buf.view(m.range.offset, m.range.count);
    // a partial sum: into mine after the round that waits for it
    const bool partial = m.reduce && !m.send;
    return PlannedMessage{m.peer >= 0 ? m.peer : rail_switch, m.send, partial ? land_for_reduction(s, buf, view, wait) : view};
  });
  run_side(comm, side, args.fifo, chain ? "collnet-chain" : "collnet-direct", *args.op);
}

// The switch reduces each part over the nodes in rank order (the first node's contribution
// copied, the others added) and sends the sum back to every GPU it serves.
void run_collnet_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args, bool chain) {
  if (comm.size() == 1) return;
  const CollNetPlan plan = plan_of(localities_of(comm), buf.size(), args.segment_elems, chain, args.channels, args.fifo);
  const std::vector<int>& members = comm.switch_members(comm.rank());
  Buffer reduced(buf.dtype(), buf.map());  // carried as the GPUs' vectors, so that views match
  PlannedSide side = plan_side(plan.messages_of_switch(members), [&](const CollNetPlan::Message& m, PlannedSide& s, size_t wait) {
    const View view = reduced.view(m.range.offset, m.range.count);
    return PlannedMessage{m.peer, m.send, m.send ? view : land_for_reduction(s, buf, view, wait, m.peer == members.front())};
  });
  run_side(comm, side, args.fifo, "sharp-switch", *args.op);
}

Schedule collnet_schedule(const ModelInput& in, bool chain) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  schedule.mark_rank_by_rank();
  const CollNetPlan plan = plan_of(localities_of(in), in.elems, in.segment_elems, chain, in.channels, in.fifo);
  std::vector<std::vector<Flow>> steps;
  auto add = [&](int from, int to, const CollNetPlan::Message& m) {
    if (!m.send) return;
    if (steps.size() <= static_cast<size_t>(m.step)) steps.resize(static_cast<size_t>(m.step) + 1);
    steps[static_cast<size_t>(m.step)].push_back({from, to, in.bytes(m.range.count), 0, false, m.wait});
  };
  // rail s's switch (schedule rank p + s) serves GPU s of every node
  for (int rank = 0; rank < in.p; ++rank)
    for (const auto& m : plan.messages_of(rank)) {
      add(rank, m.peer >= 0 ? m.peer : in.p + plan.member_of(rank), m);
      if (m.peer < 0 && !m.send) add(in.p + plan.member_of(rank), rank, {m.step, m.kind, m.lane, m.chunk, -1, true, m.range, false, m.wait});
    }
  for (const auto& flows : steps) {
    Step& step = schedule.step();
    step.fifo = in.fifo;
    for (const Flow& flow : flows) {
      step.send(flow.src, flow.dst, flow.bytes);
      step.flows.back().wait_steps = flow.wait_steps;
    }
  }
  return schedule;
}

}  // namespace collsim
