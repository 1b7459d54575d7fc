#pragma once
// What a run is: everything fixed before the engine runs (the scenario, the algorithm,
// the payload, the model's input, the ranks' hosts, the training plan). Every actor
// reads it; none changes it (actors get it as const).
#include <memory>
#include <optional>
#include <vector>

#include "algorithms/registry.hpp"
#include "comm/comm_group.hpp"
#include "model/cost_model.hpp"
#include "scenario/scenario.hpp"
#include "sim/payload.hpp"
#include "sim/verify.hpp"
#include "training/iteration.hpp"
#include "training/linear_regression.hpp"
#include "training/zero3.hpp"

namespace simgrid::s4u {
class Host;
}

namespace collsim {

struct RunSetup {
  const Scenario* scenario = nullptr;
  const AlgorithmInfo* algorithm = nullptr;
  Payload payload;
  ModelInput model;               // for the full group; model_for(group) gives a rebuilt group's
  std::unique_ptr<ReduceOp> op;
  CollectiveArgs args;
  std::vector<simgrid::s4u::Host*> rank_hosts;
  std::vector<int> rank_localities;  // by world rank: the hierarchical allreduce's groups
  simgrid::s4u::Host* control_host = nullptr;  // where injectors and the coordinator run
  std::unique_ptr<LinearRegression> regression;
  InputFn input;                  // synthetic gradients when there is no model
  // Workers keep a copy of their gradient when a rollback needs it or it cannot be made
  // again (a model's gradient): otherwise verification regenerates it (one copy of the
  // carried data fewer: 256 MiB at p = 8192).
  bool keep_inputs = true;
  std::vector<BucketSlice> buckets;  // layered training: in backward order (empty: one collective)
  // training.sharding: each bucket's allreduce run as its two halves, apart
  const AlgorithmInfo* shard_reduce_scatter = nullptr;
  const AlgorithmInfo* shard_allgather = nullptr;
  // training.sharding "zero3": the stream's ops and the device's layers
  std::optional<Zero3Plan> zero3;

  int world_size() const { return static_cast<int>(rank_hosts.size()); }
  // The model's input for a group: its size, its locality groups and its members as the
  // route endpoints (the model prices its own routes); the other fields (alpha, B, ...)
  // stay the full group's.
  ModelInput model_for(const CommGroup& group) const;
};

}  // namespace collsim
