#include "algorithms/nvls_rounds.hpp"

#include <algorithm>

#include "algorithms/nvls_plan.hpp"
#include "algorithms/pipelined_rounds.hpp"

namespace collsim {

namespace {

// The switch's multicasts run apart from its reductions (the hardware's are independent):
// two switch actors per node, each with its own messages (and FIFOs) to every GPU.
bool multicast(NvlsPlan::Kind kind) {
  return kind == NvlsPlan::Kind::multicast_up || kind == NvlsPlan::Kind::multicast_down;
}

// The hops across nodes (NVLSTree's, the ring's): waited for as late as NCCL's FIFO lets their
// senders run ahead.
int network_lag(NvlsAcross across, int fifo) { return across != NvlsAcross::none ? std::max(0, fifo - 1) : 0; }

NvlsAcross across_of(bool tree) { return tree ? NvlsAcross::tree : NvlsAcross::none; }

const char* phase_of(NvlsAcross across) {
  return across == NvlsAcross::tree ? "nvls-tree" : across == NvlsAcross::ring ? "nvls-ring" : "nvls";
}

}  // namespace

void run_nvls_rank(Comm& comm, Buffer& buf, const CollectiveArgs& args, bool tree) {
  run_nvls_rank(comm, buf, args, across_of(tree));
}

void run_nvls_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args, bool tree) {
  run_nvls_switch(comm, buf, args, across_of(tree));
}

Schedule nvls_schedule(const ModelInput& in, bool tree) { return nvls_schedule(in, across_of(tree)); }

void run_nvls_rank(Comm& comm, Buffer& buf, const CollectiveArgs& args, NvlsAcross across) {
  if (comm.size() == 1) return;
  const NvlsPlan plan(localities_of(comm), buf.size(), args.segment_elems, across, network_lag(across, args.fifo));
  const int n = plan.node_of(comm.rank()), reducer = comm.reducing_switch(SwitchKind::nvlink);
  const int multicaster = reducer + plan.nodes();
  const auto messages = plan.messages_of(comm.rank());
  PlannedSide side = plan_side(messages, [&](const NvlsPlan::Message& m, PlannedSide& s, size_t wait) {
    const Chunk c = plan.span(n, m);
    const View view = buf.view(c.offset, c.count);
    const bool partial = NvlsPlan::partial(m);  // a sum from below or the ring's: reduced after its round
    // a GPU's own chunk goes to the switch as far ahead as the FIFO lets it (NCCL's scatter)
    const int peer = m.peer >= 0 ? m.peer : multicast(m.kind) ? multicaster : reducer;
    return PlannedMessage{peer, m.send, partial ? land_for_reduction(s, buf, view, wait) : view,
                          m.kind == NvlsPlan::Kind::reduce_up};
  });
  run_side(comm, side, args.fifo, phase_of(across), *args.op);
}

// Switch actor s (comm.rank() - comm.size()) is node s % nodes' reductions (s < nodes) or
// its multicasts. The reductions: each chunk reduced over the node's GPUs in member order
// (the first's contribution copied, the others added), each slice sent to its GPU; the
// multicasts: each slice received, the whole chunk sent to every GPU.
void run_nvls_switch(Comm& comm, Buffer& buf, const CollectiveArgs& args, NvlsAcross across) {
  const NvlsPlan plan(localities_of(comm), buf.size(), args.segment_elems, across, network_lag(across, args.fifo));
  const int actor = comm.rank() - comm.size(), n = actor % plan.nodes();
  const bool multicasts = actor >= plan.nodes();
  std::vector<NvlsPlan::Message> messages;
  for (const auto& m : plan.messages_of(-1 - n))
    if (multicast(m.kind) == multicasts) messages.push_back(m);
  Buffer reduced(buf.dtype(), buf.map());  // carried as the GPUs' vectors, so that views match
  PlannedSide side = plan_side(messages, [&](const NvlsPlan::Message& m, PlannedSide& s, size_t wait) {
    const Chunk c = plan.span(n, m);
    const View view = reduced.view(c.offset, c.count);
    // a GPU's contribution: into the node's sum after its round
    const bool contribution = m.kind == NvlsPlan::Kind::reduce_up;
    return PlannedMessage{m.peer, m.send, contribution ? land_for_reduction(s, buf, view, wait, m.member == 0) : view};
  });
  run_side(comm, side, args.fifo, "nvswitch", *args.op);
}

Schedule nvls_schedule(const ModelInput& in, NvlsAcross across) {
  Schedule schedule;
  if (in.p < 2) return schedule;
  schedule.mark_rank_by_rank();
  const std::vector<int> locality = localities_of(in);
  const NvlsPlan plan(locality, in.elems, in.segment_elems, across, network_lag(across, in.fifo));
  std::vector<std::vector<Flow>> steps;
  // node n's switch is schedule rank p + n for its reductions, p + nodes + n for its multicasts
  auto switch_of = [&](int n, const NvlsPlan::Message& m) { return in.p + n + (multicast(m.kind) ? plan.nodes() : 0); };
  auto add = [&](int from, int n, const NvlsPlan::Message& m) {
    if (!m.send) return;
    const Chunk c = plan.span(n, m);
    if (steps.size() <= static_cast<size_t>(m.step)) steps.resize(static_cast<size_t>(m.step) + 1);
    steps[static_cast<size_t>(m.step)].push_back(
        {from, m.peer < 0 ? switch_of(n, m) : m.peer, in.bytes(c.count), 0, m.kind == NvlsPlan::Kind::reduce_up, m.wait});
  };
  for (int rank = 0; rank < in.p; ++rank)
    for (const auto& m : plan.messages_of(rank)) add(rank, plan.node_of(rank), m);
  for (int n = 0; n < plan.nodes(); ++n)
    for (const auto& m : plan.messages_of(-1 - n)) add(switch_of(n, m), n, m);
  for (const auto& flows : steps) {
    Step& step = schedule.step();
    step.fifo = in.fifo;
    for (const Flow& flow : flows) {
      flow.ahead ? step.send_ahead(flow.src, flow.dst, flow.bytes) : step.send(flow.src, flow.dst, flow.bytes);
      step.flows.back().wait_steps = flow.wait_steps;
    }
  }
  return schedule;
}

}  // namespace collsim
