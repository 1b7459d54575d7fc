#pragma once
// The allreduce of the chain (its broadcast: student_chain_broadcast.hpp).
// The chain the student slot of lab 7 (docs/labs/lab7-write-your-own-allreduce.md) holds
// until a student writes their own: correct but slow. src/algorithms/student.cpp calls it;
// a student's file replaces the calls of the collective they write and keeps the other
// (tests/student/ do). Inline: every program that fills the slot includes it.
//
// It reduces along the chain p-1 -> ... -> 1 -> 0 and sends the result back along
// 0 -> 1 -> ... -> p-1: 2(p-1) message times of the whole vector, 2(p-1)(alpha + n/B).
#include "algorithms/algorithms.hpp"
#include "algorithms/schedules.hpp"

namespace collsim::student_chain {

inline void allreduce(Comm& comm, Buffer& buf, const CollectiveArgs& args) {
  const int p = comm.size(), r = comm.rank();
  // room for a peer's vector, shaped as this one (scratch, holding: collsim may keep fewer
  // elements in memory than the network carries)
  Buffer incoming = buf.scratch(buf.size());
  View received = incoming.holding(buf.all());
  // 1. reduce along the chain p-1 -> ... -> 1 -> 0: rank r adds what r+1 sends and passes it on
  comm.label("reduce", 0);
  if (r < p - 1) {
    comm.recv(r + 1, received);
    args.op->combine(buf.all(), received);
  }
  if (r > 0) comm.send(r - 1, buf.all());
  // 2. broadcast the result back along the chain 0 -> 1 -> ... -> p-1
  comm.label("broadcast", 0);
  if (r > 0) comm.recv(r - 1, buf.all());
  if (r < p - 1) comm.send(r + 1, buf.all());
}

// One Step per round of messages that travel at the same time, each send(src, dst, bytes).
inline Schedule schedule_allreduce(const ModelInput& in) {
  Schedule schedule;
  const double n = in.bytes(in.elems);
  for (int r = in.p - 1; r > 0; --r) schedule.step().send(r, r - 1, n);
  for (int r = 0; r + 1 < in.p; ++r) schedule.step().send(r, r + 1, n);
  return schedule;
}

}  // namespace collsim::student_chain
