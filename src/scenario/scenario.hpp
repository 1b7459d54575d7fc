#pragma once
// A scenario (contract, docs/scenario-format.md): what to simulate, validated, units
// resolved. It is read from JSON, possibly overridden by --set and CLI flags, then parsed.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/collective.hpp"
#include "comm/buffer.hpp"
#include "comm/reduce_op.hpp"
#include "platform/network_model.hpp"

namespace collsim {

struct CollectiveSpec {
  Collective kind = Collective::allreduce;
  std::string algorithm;           // defaults per collective (ring, binomial, binomial)
  double size = 64.0 * 1024 * 1024;  // logical bytes per rank
  Dtype dtype = Dtype::float32;
  OpKind op = OpKind::sum;
  int root = 0;
  double segment = 1024.0 * 1024;  // logical bytes per segment of pipelined algorithms
  std::optional<uint64_t> carried_elements;  // elements kept in memory per rank
};

struct TrainingSpec {
  int rounds = 1;
  double compute = 0;  // seconds of computation before each collective
};

struct Scenario {
  std::string name = "cli";
  std::string topology;            // file or generator; empty = star:<workers>
  NetworkModel network = NetworkModel::ideal;
  std::optional<int> workers;      // empty = every host of the topology
  CollectiveSpec collective;
  TrainingSpec training;
  std::vector<std::string> placement;  // host names for ranks 0..p-1, or empty
  std::vector<std::string> cfg;        // SimGrid options "KEY:VALUE"
  uint64_t seed = 1;
  std::string source_dir;          // folder of the scenario file, for relative paths
};

// Reads a scenario file: one InputError line if it cannot be read or is not JSON.
nlohmann::json load_scenario_json(const std::string& path);

// Applies "key.path=value" to the document (value parsed as JSON, else taken as a string).
void apply_override(nlohmann::json& document, const std::string& assignment);
void set_path(nlohmann::json& document, const std::string& path, const nlohmann::json& value);

// Validates everything that can be checked without a platform; errors name the field.
Scenario parse_scenario(const nlohmann::json& document, const std::string& source_dir);

// The fully resolved scenario, as the trace records it.
nlohmann::json scenario_to_json(const Scenario& scenario, int workers, const std::string& topology);

}  // namespace collsim
