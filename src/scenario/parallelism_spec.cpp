#include "scenario/parallelism_spec.hpp"

#include <fmt/format.h>
#include <set>

#include "algorithms/registry.hpp"
#include "scenario/json_fields.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace collsim {

using json = nlohmann::json;

const NamedEnum<Dimension>& dimension_names() {
  static const NamedEnum<Dimension> names{
      "dimension", {{Dimension::tensor, "tensor"}, {Dimension::pipeline, "pipeline"}, {Dimension::data, "data"}, {Dimension::expert, "expert"}}};
  return names;
}

std::string ParallelCollective::communicator() const {
  return group ? std::string(dimension_names().name(*group)) : std::string("ranks");
}

int ParallelismSpec::size_of(Dimension dimension) const {
  switch (dimension) {
    case Dimension::tensor: return tensor;
    case Dimension::pipeline: return pipeline;
    case Dimension::data: return data;
    case Dimension::expert: return expert;
  }
  return 1;
}

namespace {

// Largest size of one dimension: beyond any platform collsim builds (run_limits.hpp).
constexpr long long max_dimension = 1 << 20;

std::vector<std::vector<int>> parse_rank_lists(const json& value, const std::string& field) {
  if (!value.is_array() || value.empty())
    throw InputError(fmt::format("{}: must be a non-empty list of groups, each a list of world ranks ([[0, 1], [2, 3]])", field));
  std::vector<std::vector<int>> groups;
  for (size_t g = 0; g < value.size(); ++g) {
    const std::string where = fmt::format("{}.{}", field, g);
    if (!value[g].is_array() || value[g].empty()) throw InputError(fmt::format("{}: must be a non-empty list of world ranks", where));
    groups.emplace_back();
    for (size_t i = 0; i < value[g].size(); ++i)
      groups.back().push_back(static_cast<int>(get_integer(value[g][i], fmt::format("{}.{}", where, i), 0, max_dimension * max_dimension)));
  }
  return groups;
}

ParallelCollective parse_parallel_collective(const json& object, const std::string& where) {
  if (!object.is_object()) throw InputError(fmt::format("{}: must be an object ({{\"group\": \"tensor\", \"kind\": \"allreduce\", ...}})", where));
  check_keys(object, where, {"group", "ranks", "kind", "algorithm", "size", "dtype", "op", "root", "carried_elements"});
  ParallelCollective c;
  if (object.contains("group") == object.contains("ranks"))
    throw InputError(fmt::format("{}: give either group (one of {}) or ranks (explicit groups of world ranks)", where,
                                 join(dimension_names().names())));
  if (object.contains("group")) c.group = dimension_names().parse(get_string(object["group"], where + ".group"), where + ".group");
  if (object.contains("ranks")) c.ranks = parse_rank_lists(object["ranks"], where + ".ranks");
  if (object.contains("kind")) c.kind = parse_collective(get_string(object["kind"], where + ".kind"), where + ".kind");
  c.algorithm = object.contains("algorithm") ? get_string(object["algorithm"], where + ".algorithm") : default_algorithm(c.kind);
  if (!chosen_at_run_time(c.algorithm)) find_algorithm(c.kind, c.algorithm, where + ".algorithm");
  if (object.contains("size")) c.size = get_quantity(object["size"], where + ".size", parse_size);
  if (c.size <= 0) throw InputError(fmt::format("{}.size: must be more than 0 bytes", where));
  if (object.contains("dtype")) c.dtype = parse_dtype(get_string(object["dtype"], where + ".dtype"), where + ".dtype");
  if (object.contains("op")) c.op = parse_op(get_string(object["op"], where + ".op"), where + ".op");
  if (object.contains("root")) c.root = static_cast<int>(get_integer(object["root"], where + ".root", 0, max_dimension));
  if (object.contains("carried_elements"))
    c.carried_elements = static_cast<uint64_t>(get_integer(object["carried_elements"], where + ".carried_elements", 1, 1LL << 32));
  return c;
}

}  // namespace

ParallelismSpec parse_parallelism(const json& object) {
  if (!object.is_object())
    throw InputError("parallelism: must be an object ({\"tensor\": 8, \"pipeline\": 4, \"data\": 32, \"expert\": 8})");
  check_keys(object, "parallelism", {"tensor", "pipeline", "data", "expert", "collectives", "step"});
  ParallelismSpec spec;
  spec.given = true;
  for (Dimension d : dimension_names().values()) {
    const std::string key(dimension_names().name(d));
    if (!object.contains(key)) continue;
    const int size = static_cast<int>(get_integer(object[key], "parallelism." + key, 1, max_dimension));
    (d == Dimension::tensor ? spec.tensor : d == Dimension::pipeline ? spec.pipeline : d == Dimension::data ? spec.data : spec.expert) = size;
  }
  if (spec.data % spec.expert != 0)
    throw InputError(fmt::format("parallelism.expert: {} does not divide parallelism.data {}: each expert group is a block "
                                 "of data-parallel ranks (Megatron's order)", spec.expert, spec.data));
  if (static_cast<long long>(spec.tensor) * spec.pipeline * spec.data > max_dimension)
    throw InputError(fmt::format("parallelism: tensor x pipeline x data = {} workers; allowed: at most {}",
                                 static_cast<long long>(spec.tensor) * spec.pipeline * spec.data, max_dimension));
  if (object.contains("collectives") == object.contains("step"))
    throw InputError("parallelism: give either collectives (collectives that run at once) or step (a transformer's "
                     "training step); not both, not neither");
  if (object.contains("step")) {
    llm::Layout layout;
    layout.tensor = spec.tensor;
    layout.pipeline = spec.pipeline;
    layout.data = spec.data;
    layout.expert = spec.expert;
    spec.step = parse_step(object["step"], layout);
    return spec;
  }
  const json& list = object["collectives"];
  if (!list.is_array() || list.empty())
    throw InputError("parallelism.collectives: must be a non-empty list ([{\"group\": \"tensor\", \"kind\": \"allreduce\", \"size\": \"16MiB\"}])");
  for (size_t i = 0; i < list.size(); ++i) spec.collectives.push_back(parse_parallel_collective(list[i], fmt::format("parallelism.collectives.{}", i)));
  return spec;
}

void check_parallelism(const ParallelismSpec& spec, const std::optional<int>& workers) {
  if (workers && *workers != spec.workers())
    throw InputError(fmt::format("workers: {} given, but parallelism makes tensor {} x pipeline {} x data {} = {}; "
                                 "leave workers out or make them agree", *workers, spec.tensor, spec.pipeline, spec.data, spec.workers()));
  for (size_t i = 0; i < spec.collectives.size(); ++i) {
    const ParallelCollective& c = spec.collectives[i];
    const std::string where = fmt::format("parallelism.collectives.{}", i);
    std::set<int> seen;
    for (size_t g = 0; g < c.ranks.size(); ++g)
      for (int rank : c.ranks[g]) {
        if (rank >= spec.workers())
          throw InputError(fmt::format("{}.ranks.{}: rank {} is not a worker; allowed: 0 to {}", where, g, rank, spec.workers() - 1));
        if (!seen.insert(rank).second)
          throw InputError(fmt::format("{}.ranks.{}: rank {} is listed twice (a rank is in one group of a collective)", where, g, rank));
      }
    const int smallest = c.group ? spec.size_of(*c.group) : static_cast<int>(c.ranks.front().size());
    for (const auto& group : c.ranks)
      if (c.root >= static_cast<int>(group.size()))
        throw InputError(fmt::format("{}.root: {} is not a rank of a group of {}", where, c.root, group.size()));
    if (c.group && c.root >= smallest)
      throw InputError(fmt::format("{}.root: {} is not a rank of a {} group of {}; allowed: 0 to {}", where, c.root,
                                   c.communicator(), smallest, smallest - 1));
  }
}

json parallelism_to_json(const ParallelismSpec& spec) {
  json collectives = json::array();
  for (const ParallelCollective& c : spec.collectives) {
    json one{{"kind", collective_name(c.kind)}, {"algorithm", c.algorithm}, {"size", c.size},
             {"dtype", dtype_name(c.dtype)}, {"op", op_name(c.op)}, {"root", c.root}};
    if (c.group) one["group"] = dimension_names().name(*c.group);
    else one["ranks"] = c.ranks;
    if (c.carried_elements) one["carried_elements"] = *c.carried_elements;
    collectives.push_back(one);
  }
  json out{{"tensor", spec.tensor}, {"pipeline", spec.pipeline}, {"data", spec.data}, {"expert", spec.expert}};
  if (spec.step.given) out["step"] = step_to_json(spec.step);
  else out["collectives"] = collectives;
  return out;
}

}  // namespace collsim
