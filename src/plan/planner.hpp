#pragma once
// The plan step: a scenario in, a RunPlan out (plan/run_plan.hpp). It makes the process's
// one SimGrid engine (with the run's options) and builds the platform in it, but runs
// nothing: the engine runs the plan afterwards (sim/simulation.hpp).
//
// The steps, in order (each refuses bad input with the field at fault):
//   limits     the platform's size and the run's messages and buffers (README "Limits")
//   platform   built in the engine; the ranks placed on its hosts
//   payload    logical and carried sizes
//   model      the routes, the locality groups, alpha and B; the algorithm auto chooses
//   faults     each target found; the control host
//   bounds     the platform's tightest cut
//   training   buckets, sharding, the stream of a ZeRO-3 iteration, memory per worker
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/message_log.hpp"
#include "nccl/constants.hpp"
#include "plan/run_plan.hpp"
#include "plan/simgrid_guard.hpp"

namespace collsim {

struct GeneratedPlatform;

// --algorithm auto on GPUs: the fastest of NCCL's variants against the fastest of collsim's
// algorithms (run/nccl_auto.hpp, decided in child processes before the plan is made: NCCL's
// variants run on a platform of their own). When `chosen`, the plan runs that variant.
struct AutoNcclPick {
  bool chosen = false;
  std::string algorithm;  // collsim's name of NCCL's algorithm ("nccl-tree")
  nccl::Proto proto = nccl::Proto::simple;
  std::string by;         // "model" or "simulate": how collsim's best was found
  std::string reason;     // for people: the comparison
  std::vector<AutoCandidate> variants;   // NCCL's variants, best first (those that cannot run last)
  std::optional<AutoCandidate> own;      // collsim's best, as auto found it (none: none completes)
};

struct PlanOptions {
  std::vector<std::string> cfg;               // the user's --cfg options, applied after the model's
  std::vector<AutoCandidate> auto_simulated;  // algorithm "auto" by "simulate": the trials (run/run_scenario.hpp)
  bool topology_bound = true;                 // look for the platform's tightest cut (a trial needs no bound)
  // `collsim model`: nothing will be simulated, so the run limits (messages, buffers, the
  // hosts a run builds) do not apply; the platform may have up to max_model_hosts hosts.
  bool model_only = false;
  // model_only on a generated platform: its routes computed from the generator's structure,
  // no engine and no platform built (model/generated_network.hpp); false: read from the
  // platform built in SimGrid, as a run reads them (the tests compare both).
  bool routes_from_structure = true;
  // model_only on a generated platform: that platform already made (model_structure below),
  // for several plans in one process that read the same routes (NCCL's variants,
  // run/nccl_auto.cpp), each route computed once for all of them; unset: made for this plan.
  std::shared_ptr<const GeneratedPlatform> generated;
  uint64_t kept_messages = default_kept_messages;  // single messages kept for traces and pictures (--messages)
  InputFn input;                              // rank inputs; default: fill_input with the scenario's seed
  std::optional<AutoNcclPick> auto_nccl;      // algorithm "auto" on GPUs: NCCL's variants weighed (run/nccl_auto.hpp)
};

// Call once per process (it makes the engine, except for a model_only plan whose routes come
// from the generator's structure: RunPlan::model_routes says which). `guard` catches SimGrid's aborts from the
// moment the engine exists, naming what was being built.
RunPlan plan_run(const Scenario& scenario, const PlanOptions& options, SimGridGuard& guard);

// The generated platform a model_only plan of `scenario` prices on (PlanOptions::generated),
// made once; nullptr when its routes come from SimGrid's platform (a platform file, a torus,
// a placement, ...: plan_run says why in RunPlan::model_routes).
std::shared_ptr<const GeneratedPlatform> model_structure(const Scenario& scenario);

}  // namespace collsim
