#pragma once
// What the actors of one simulation share, by who changes it (SimGrid runs one actor at
// a time: no locks are needed; contexts/nthreads > 1 is refused, sim/simulation.cpp):
//   setup       fixed before the engine runs; every actor reads it (sim/run_setup.hpp)
//   record      what the run observed; actors append, collect_results reads (sim/run_record.hpp)
//   membership  the groups; the coordinator decides (recovery/membership.hpp)
//   workers     each worker's own state; an injector marks its preemption, the
//               coordinator reads the fates
// One RunState per run_simulation call, shared by the actors' closures: it lives as long
// as the run and any actor still blocked when the engine stops (a stall), whose stack the
// engine may unwind later, at exit.
#include <memory>
#include <simgrid/forward.h>
#include <vector>

#include "comm/buffer.hpp"
#include "comm/comm_group.hpp"
#include "recovery/membership.hpp"
#include "sim/bucket_data.hpp"
#include "sim/run_record.hpp"
#include "sim/replay.hpp"
#include "sim/run_setup.hpp"

namespace collsim {

struct WorkerState {
  WorkerFate fate = WorkerFate::running;
  double fate_time = 0;
  int round = 0;
  std::vector<double> weights;  // model copy (training with a model)
  Buffer result;                // the collective's output of the last completed round
  Buffer input;                 // the gradient that went into it
  int bucket = -1;              // layered training: the bucket whose collective it is in (-1: none)
  Activity in_flight;           // that collective's interval so far (a preemption ends it, abandoned)
  // Under rebuild, a worker done with the last round waits here until every member is
  // (sim/worker.cpp): a verdict may still send the group back to redo that round.
  simgrid::s4u::SemaphorePtr waiting_for_the_group;
};

class RecoveryAdapter;
struct ResolvedFault;

struct RunState : std::enable_shared_from_this<RunState> {
  RunState();
  ~RunState();

  RunSetup setup;
  RunRecord record;
  Membership membership;
  std::vector<WorkerState> workers;                // by world rank
  std::vector<WaitState> waits;                    // by world rank: whom it waits on (the groups write it)
  std::vector<double> host_speed_factor;           // by world rank: slow-host faults (injectors write it)
  std::unique_ptr<RecoveryAdapter> recovery;       // recovery.policy "rebuild": detector and coordinator (sim/recovery_adapter.hpp)
  // Faults that strike at the start of a round (sim/faults.hpp), owned by this run.
  std::shared_ptr<const std::vector<ResolvedFault>> round_faults;
  // Identical bucket collectives that run alone, simulated once (sim/replay.hpp).
  std::unique_ptr<CollectiveReplay> replay;
  // Buckets carried in flight (sim/bucket_data.hpp): each checked once every rank is done with it.
  std::unique_ptr<BucketVerifier> bucket_verifier;

  // A group of these world ranks (numbered 0.. in this order) for `epoch`, with their
  // localities, the detector's watch and the stall tracking set; not yet in `membership`.
  std::shared_ptr<CommGroup> new_group(int epoch, std::vector<int> members);
};

}  // namespace collsim
