#include "sim/run_limits.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <type_traits>

#include "algorithms/registry.hpp"
#include "platform/generator_spec.hpp"
#include "platform/platform.hpp"
#include "platform/platform_file_check.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace collsim {
namespace {

template <typename T>
double product(const std::vector<T>& values) {
  double result = 1;
  for (const T value : values) result *= static_cast<double>(value);
  return result;
}

// Hosts of a generator, from its description alone (0 for a family it does not know: add
// every new family here).
double generated_hosts(const GeneratorSpec& spec) {
  return std::visit(
      [](const auto& family) -> double {
        using Family = std::decay_t<decltype(family)>;
        if constexpr (std::is_same_v<Family, StarSpec> || std::is_same_v<Family, RackSpec>) return family.hosts;
        if constexpr (std::is_same_v<Family, FatTreeSpec>) return product(family.down);
        if constexpr (std::is_same_v<Family, TorusSpec>) return product(family.dimensions);
        if constexpr (std::is_same_v<Family, DragonflySpec>)
          return static_cast<double>(family.groups) * family.routers * family.nodes;
        if constexpr (std::is_same_v<Family, NodesSpec>) return static_cast<double>(family.nodes) * family.devices;
        if constexpr (std::is_same_v<Family, RailSpec>) return static_cast<double>(family.nodes) * family.gpus;
        if constexpr (std::is_same_v<Family, LeafSpineSpec>) return static_cast<double>(family.leaves) * family.hosts;
        return 0;
      },
      spec);
}

}  // namespace

long long check_platform_size(const std::string& topology, const std::string& scenario_dir) {
  double hosts = 0;
  if (const auto generator = parse_generator(topology, "topology")) {
    hosts = generated_hosts(*generator);
  } else {
    hosts = static_cast<double>(check_platform_file(resolve_platform_file(topology, scenario_dir, "topology")).hosts);
  }
  if (hosts > max_run_hosts)
    throw InputError(fmt::format("topology: '{}' has {:.0f} hosts; a run builds at most {} (README \"Limits\"); "
                                 "`collsim model` predicts larger ones",
                                 topology, hosts, max_run_hosts));
  return static_cast<long long>(hosts);
}

void check_run_size(const Scenario& scenario, int p, const Payload& payload, size_t segment_elems) {
  const double ranks = p;
  const std::string& algorithm = scenario.collective.algorithm;
  const bool segmented =
      algorithm == "auto" || find_algorithm(scenario.collective.kind, algorithm, "collective.algorithm").uses.segment;
  const double segments =
      segmented ? std::ceil(static_cast<double>(payload.carried_elems) / static_cast<double>(segment_elems)) : 0;
  // Layered training runs one collective per bucket: a bucket closes once it holds `bucket`
  // bytes, so there are at most size / bucket + 1 of them, and at most one per layer
  // (Horovod's fusion: counted as one per layer). No bucket: one for the whole gradient.
  const TrainingSpec& training = scenario.training;
  double collectives = 1;
  if (training.has_layers() && (training.bucket > 0 || training.fusion))
    collectives = static_cast<double>(training.layers.size());
  if (training.has_layers() && training.bucket > 0)
    collectives = std::min(collectives, std::floor(scenario.collective.size / training.bucket) + 1);
  const double messages =
      scenario.training.rounds * collectives * (2 * ranks * (ranks - 1) + 2 * ranks * segments);
  if (messages > max_run_messages)
    throw InputError(fmt::format("workers: {} ranks x {} round(s){} could send up to {:.3g} messages; a run simulates "
                                 "at most {:.0e} (about {} of simulation at 0.3 M messages/s; README \"Limits\"); "
                                 "use fewer ranks or rounds, or `collsim model`",
                                 p, scenario.training.rounds,
                                 collectives > 1 ? fmt::format(" x {:.0f} layers' collectives", collectives) : "",
                                 messages, max_run_messages, format_time(max_run_messages / 3e5)));
  const double buffers = 3 * ranks * static_cast<double>(payload.carried_elems) * dtype_size(scenario.collective.dtype);
  if (buffers > max_carried_bytes)
    throw InputError(fmt::format("collective.carried_elements: {} ranks x {} elements need about {} of buffers; at "
                                 "most {} (README \"Limits\"): carry fewer elements",
                                 p, payload.carried_elems, format_size(buffers), format_size(max_carried_bytes)));
}

}  // namespace collsim
