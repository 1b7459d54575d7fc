#pragma once
// The scenario's "parallelism" section (docs/parallelism.md): how the workers split into
// tensor-, pipeline-, data- and expert-parallel groups, and the collectives that run on
// those groups at the same time. Only the numbers live here; the groups themselves are
// computed by src/parallel/layout.hpp.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/collective.hpp"
#include "comm/buffer.hpp"
#include "comm/reduce_op.hpp"
#include "scenario/parallelism_step.hpp"
#include "util/named_enum.hpp"

namespace collsim {

// A dimension of the layout: each names one kind of communicator.
enum class Dimension { tensor, pipeline, data, expert };
const NamedEnum<Dimension>& dimension_names();

// One collective of parallelism.collectives: it runs once in every group of its dimension
// (or in every group of `ranks`), and all of them run at the same time.
struct ParallelCollective {
  std::optional<Dimension> group;        // the dimension whose groups run it
  std::vector<std::vector<int>> ranks;   // or explicit groups of world ranks
  Collective kind = Collective::allreduce;
  std::string algorithm;                 // a name, "auto" or "nccl"
  double size = 64.0 * 1024 * 1024;      // bytes per rank
  Dtype dtype = Dtype::float32;
  OpKind op = OpKind::sum;
  int root = 0;
  std::optional<uint64_t> carried_elements;

  // "tensor", or "ranks" for explicit groups: the communicator's name in the summary.
  std::string communicator() const;
};

struct ParallelismSpec {
  bool given = false;
  int tensor = 1, pipeline = 1, data = 1, expert = 1;
  std::vector<ParallelCollective> collectives;  // or
  StepSpec step;                                // one training step of a transformer

  int workers() const { return tensor * pipeline * data; }
  int size_of(Dimension dimension) const;
};

ParallelismSpec parse_parallelism(const nlohmann::json& object);
// Checks against the rest of the scenario: its workers, and what a parallel run cannot do yet.
void check_parallelism(const ParallelismSpec& spec, const std::optional<int>& workers);
nlohmann::json parallelism_to_json(const ParallelismSpec& spec);

}  // namespace collsim
