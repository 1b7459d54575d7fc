#include "algorithms/pipelined_rounds.hpp"

#include <algorithm>

#include "comm/reduce_op.hpp"

namespace collsim {

std::vector<int> localities_of(const Comm& comm) {
  std::vector<int> locality;
  for (int r = 0; r < comm.size(); ++r) locality.push_back(comm.locality(r));
  return locality;
}

std::vector<int> localities_of(const ModelInput& in) {
  const auto groups = model_groups(in);
  std::vector<int> locality(static_cast<size_t>(in.p));
  for (size_t g = 0; g < groups.size(); ++g)
    for (int r : groups[g]) locality[static_cast<size_t>(r)] = static_cast<int>(g);
  return locality;
}

int round_waiting(const std::vector<int>& round_steps, int wait_step) {
  return static_cast<int>(std::upper_bound(round_steps.begin(), round_steps.end(), wait_step) - round_steps.begin()) - 1;
}

View land_for_reduction(PlannedSide& side, const Buffer& shape, const View& into, size_t wait, bool first) {
  side.slots.push_back(shape.scratch(into.logical));
  const View from = side.slots.back().holding(into);
  if (first) side.copies[wait].emplace_back(from, into);
  else side.reductions[wait].emplace_back(into, from);
  return from;
}

void run_side(Comm& comm, const PlannedSide& side, int fifo, const char* phase, const ReduceOp& op) {
  run_pipelined(comm, side.rounds, fifo, phase, [&](int q) {
    for (const auto& [from, into] : side.copies[static_cast<size_t>(q)]) copy_elements(into, from);
    for (const auto& [into, from] : side.reductions[static_cast<size_t>(q)]) op.combine(into, from);
  });
}

void run_pipelined(Comm& comm, const PlannedRounds& rounds, int fifo, const char* phase,
                   const std::function<void(int)>& after_round) {
  const int count = static_cast<int>(rounds.size());
  fifo = std::max(1, fifo);
  std::vector<std::vector<Request>> receives(rounds.size()), sends(rounds.size());
  // round q's receives and its sends of data that waits for nothing, posted `fifo` rounds early
  auto post_early = [&](int q) {
    if (q >= count) return;
    comm.label(phase, q);
    for (const PlannedMessage& m : rounds[static_cast<size_t>(q)]) {
      if (!m.send) receives[static_cast<size_t>(m.wait_round >= 0 ? m.wait_round : q)].push_back(comm.irecv(m.peer, m.view));
      else if (m.ahead) sends[static_cast<size_t>(q)].push_back(comm.isend(m.peer, m.view));
    }
  };
  for (int q = 0; q < fifo; ++q) post_early(q);
  for (int q = 0; q < count; ++q) {
    comm.label(phase, q);
    for (const PlannedMessage& m : rounds[static_cast<size_t>(q)])
      if (m.send && !m.ahead) sends[static_cast<size_t>(m.at_end ? count - 1 : q)].push_back(comm.isend(m.peer, m.view));
    post_early(q + fifo);
    comm.wait_all(receives[static_cast<size_t>(q)]);
    // the sends `fifo` rounds back leave their slots (the last round waits for every send)
    for (int sent = std::max(0, q - fifo); sent <= (q == count - 1 ? q : q - fifo); ++sent)
      comm.wait_all(sends[static_cast<size_t>(sent)]);
    if (after_round) after_round(q);
  }
}

}  // namespace collsim
