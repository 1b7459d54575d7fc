#pragma once
// The rounds of a run without layers, replayed when identical (sim/replay.hpp): each round's
// collective on the whole vector is one collective of the replay's sequence.
namespace collsim {

class Buffer;
class Comm;
struct CollectiveArgs;
struct RunState;

// The flops rank `world` executes for round `round`'s computation: the round's compute time
// (or flops) at its host's speed, stretched by a slow-host fault and the round's noise.
double round_compute_flops(const RunState& state, int world, int round);

// Before round `round`'s computation on rank `world`: when its collective will begin (now
// plus the computation, as compute() runs it alone on the rank's host: a run places one
// rank per host, and replay is off with server processes) and the least time after its end
// before the next round's (that round's computation; none after the last). Declared before
// computing, so that every rank has declared by the time the first one enters.
void declare_round_entry(RunState& state, int world, int round);

// The round's collective on the whole vector: replayed when it matches one simulated alone
// before, else run.
void run_round_collective(RunState& state, int world, Comm& comm, Buffer& buf, const CollectiveArgs& args, int round);

}  // namespace collsim
