#pragma once
// What a run is: its plan (plan/run_plan.hpp: the scenario, the algorithm, the payload,
// the model's input, the ranks' hosts, the training plan), and what the engine made of it
// before running (the hosts found, the reduction, the training model). Every actor reads
// it; none changes it (actors get it as const).
#include <memory>
#include <optional>
#include <vector>

#include "algorithms/registry.hpp"
#include "comm/comm_group.hpp"
#include "plan/run_plan.hpp"
#include "training/linear_regression.hpp"

namespace simgrid::s4u {
class Host;
}

namespace collsim {

struct RunSetup {
  std::shared_ptr<const RunPlan> plan;       // what was decided (plan/run_plan.hpp)
  const Scenario* scenario = nullptr;        // the plan's
  const AlgorithmInfo* algorithm = nullptr;  // the plan's choice
  std::unique_ptr<ReduceOp> op;
  CollectiveArgs args;
  std::vector<simgrid::s4u::Host*> rank_hosts;  // the plan's rank hosts, found in the engine
  simgrid::s4u::Host* control_host = nullptr;   // where injectors and the coordinator run
  std::unique_ptr<LinearRegression> regression;
  // Workers keep a copy of their gradient when a rollback needs it or it cannot be made
  // again (a model's gradient): otherwise verification regenerates it (one copy of the
  // carried data fewer: 256 MiB at p = 8192).
  bool keep_inputs = true;

  int world_size() const { return static_cast<int>(rank_hosts.size()); }
  // The model's input for a group: its size, its locality groups and its members as the
  // route endpoints (the model prices its own routes); the other fields (alpha, B, ...)
  // stay the full group's.
  ModelInput model_for(const CommGroup& group) const;
};

}  // namespace collsim
