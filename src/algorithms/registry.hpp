#pragma once
// The algorithms collsim knows, by collective and name, each with its one-line summary
// and its schedule (which the cost model prices: model/cost_model.hpp). Names are unique within a collective.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/collective.hpp"
#include "algorithms/partners.hpp"
#include "algorithms/model_input.hpp"
#include "algorithms/schedule.hpp"
#include "comm/switch_ops.hpp"

namespace collsim {

// The scenario fields an algorithm reads besides the vector (the others do not change its
// messages): what `collsim list algorithms` shows, what the tests vary, what the trace and
// the limits consider.
struct Uses {
  bool root = false;     // collective.root: broadcast, reduce, and the allreduces that meet at one rank
  bool segment = false;  // collective.segment: the vector is pipelined in segments
  bool servers = false;  // collective.servers: ranks 0 .. servers-1 serve shards
  bool groups = false;   // the platform's zones or collective.group_size
  bool channels = false; // collective.channels: slices of the vector on concurrent rings
  bool nccl = false;     // one of NCCL's algorithms: runs with NCCL's transport (nccl.*, src/nccl/)
  bool levels = false;   // collective.intra and inter: the hierarchical allreduce's algorithm at each level
};

struct AlgorithmInfo {
  Collective collective;
  std::string name;
  std::string summary;
  AlgorithmFn run;
  Schedule (*schedule)(const ModelInput& in);    // algorithms/schedules.hpp; model_time prices it
  // Which ranks talk: the cost model's alpha and B are the worst of their routes.
  PartnersFn partners = ring_and_root_partners;
  Uses uses = {};
  // collsim's own code: `auto` may choose it and `collsim list` shows it. Not the student's
  // slot (lab 7), whose code is the student's (or the template's until they build theirs).
  bool builtin = true;
  // An in-network reduction: the kind of switch it needs, and what the switch actors run
  // (comm/switch_ops.hpp); nullptr: none.
  AlgorithmFn switch_run = nullptr;
  SwitchKind switches = SwitchKind::nvlink;
};

// The file in the student slot, as the build names it (-DCOLLSIM_STUDENT_FILE); empty when
// it holds the template src/algorithms/student.cpp. Defined in a line CMakeLists.txt
// generates beside the slot's functions.
extern const char* const student_origin;

const std::vector<AlgorithmInfo>& all_algorithms();

// "root, segment", or "" when it reads none of them.
std::string uses_names(const Uses& uses);

// Throws InputError naming `field`, with "did you mean" and the allowed names.
const AlgorithmInfo& find_algorithm(Collective collective, const std::string& name, std::string_view field);

std::vector<std::string> algorithm_names(Collective collective);
// The names of NCCL's algorithms of the collective (Uses::nccl), and of the others.
std::vector<std::string> nccl_algorithm_names(Collective collective);
std::vector<std::string> classic_algorithm_names(Collective collective);

// "auto" and "nccl" name no algorithm: the run chooses one (auto by model or simulation,
// nccl as NCCL's tuner would; src/sim/auto_choice.hpp, src/nccl/tuner.hpp).
inline bool chosen_at_run_time(const std::string& algorithm) { return algorithm == "auto" || algorithm == "nccl"; }

// The reduce-scatter and the allgather an allreduce algorithm is made of, which sharded
// training runs apart: ring -> (ring, ring), rabenseifner -> (recursive-halving,
// recursive-doubling); none for the others.
std::optional<std::pair<std::string, std::string>> allreduce_halves(const std::string& allreduce);

}  // namespace collsim
