#include "plan/run_limits.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <fmt/format.h>
#include <type_traits>

#include "algorithms/message_counts.hpp"
#include "algorithms/registry.hpp"
#include "plan/nccl_run.hpp"
#include "platform/generator_spec.hpp"
#include "platform/platform.hpp"
#include "platform/platform_file_check.hpp"
#include "training/variable_placement.hpp"
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

long long check_platform_size(const std::string& topology, const std::string& scenario_dir, long long most) {
  double hosts = 0;
  if (const auto generator = parse_generator(topology, "topology")) {
    hosts = generated_hosts(*generator);
  } else {
    hosts = static_cast<double>(check_platform_file(resolve_platform_file(topology, scenario_dir, "topology")).hosts);
  }
  if (hosts > static_cast<double>(most))
    throw InputError(most == max_run_hosts
                         ? fmt::format("topology: '{}' has {:.0f} hosts; a run builds at most {} (README \"Limits\"); "
                                       "`collsim model` predicts larger ones",
                                       topology, hosts, most)
                         : fmt::format("topology: '{}' has {:.0f} hosts; `collsim model` prices at most {} "
                                       "(README \"Limits\")",
                                       topology, hosts, most));
  return static_cast<long long>(hosts);
}

namespace {

// The algorithms one bucket's collective may run: the scenario's, its two halves when
// sharded, or every algorithm of the collective for auto.
std::vector<std::vector<const AlgorithmInfo*>> collectives_per_bucket(const Scenario& scenario) {
  const CollectiveSpec& collective = scenario.collective;
  if (scenario.training.sharding != Sharding::none) {
    if (const auto halves = allreduce_halves(collective.algorithm))
      return {{&find_algorithm(Collective::reduce_scatter, halves->first, "collective.algorithm")},
              {&find_algorithm(Collective::allgather, halves->second, "collective.algorithm")}};
  }
  if (!chosen_at_run_time(collective.algorithm)) return {{&find_algorithm(collective.kind, collective.algorithm, "collective.algorithm")}};
  std::vector<const AlgorithmInfo*> candidates;
  for (const AlgorithmInfo& algorithm : all_algorithms())
    if (algorithm.collective == collective.kind && algorithm.builtin &&
        (collective.algorithm == "auto" || algorithm.uses.nccl))
      candidates.push_back(&algorithm);
  return {candidates};
}

// Whether identical bucket collectives may be replayed (sim/simulation.cpp says when not). The
// rounds of a run without layers may replay too, but the limit counts them all: a round replays
// only when its entries repeat a recorded one's, which compute noise or staggered ends may prevent.
bool may_replay(const Scenario& scenario) {
  const TrainingSpec& training = scenario.training;
  if (!training.has_layers() || !training.replay || !scenario.faults.empty() || training.streams > 1 ||
      scenario.recovery.policy != RecoveryPolicy::none)
    return false;
  for (const auto& choices : collectives_per_bucket(scenario))
    for (const AlgorithmInfo* algorithm : choices)
      if (algorithm->switch_run != nullptr || algorithm->uses.servers) return false;
  return true;
}

// Bucket i is the first of its shape (its layers' logical and carried elements).
bool first_of_its_shape(const Payload& payload, size_t i) {
  for (size_t j = 0; j < i; ++j)
    if (payload.piece_logical[j] == payload.piece_logical[i] && payload.piece_carried[j] == payload.piece_carried[i])
      return false;
  return true;
}

// A long time for people: "30 minutes", "8 hours".
std::string about_minutes(double seconds) {
  if (seconds < 2 * 3600) return fmt::format("{:.0f} minutes", std::max(1.0, seconds / 60));
  return fmt::format("{:.0f} hours", seconds / 3600);
}

// "ring allreduce", or "auto allreduce" when the choice is not made yet.
std::string describe_algorithm(const Scenario& scenario) {
  return fmt::format("{} {}", scenario.collective.algorithm, collective_name(scenario.collective.kind));
}

}  // namespace

// The linear regression's data set, held once for every rank: parameters x samples features
// and one target per sample, in doubles. Each is legal alone; together they may not fit.
void check_data_set(const Scenario& scenario, int p) {
  const TrainingSpec& training = scenario.training;
  if (!training.has_model()) return;
  const double samples = training.samples > 0 ? training.samples : 64.0 * p;  // the default: 64 per worker
  const double bytes = (static_cast<double>(training.parameters) + 1) * samples * sizeof(double);
  if (bytes > max_carried_bytes)
    throw InputError(fmt::format("training.parameters x training.samples: {} x {:.0f} features of 8 bytes make a {} "
                                 "data set; at most {} (README \"Limits\"): fewer parameters or samples",
                                 training.parameters, samples, format_size(bytes), format_size(max_carried_bytes)));
}

namespace {

// The servers a parameter-server deployment runs, before the platform places them: exact
// but for per_node, counted for one node (the nodes come from the platform: at least that
// many; plan/planner.cpp counts the run again once they are placed, recount_placed_servers).
int planned_servers(const CollectiveSpec& collective, int p) {
  const ParameterServerSpec& spec = collective.parameter_server;
  if (!spec.hosts.empty()) return static_cast<int>(spec.hosts.size());
  if (spec.per_node) return *spec.per_node;
  if (spec.ratio) return std::max(1, static_cast<int>(std::lround(*spec.ratio * p)));
  return collective.servers.value_or(1);
}

// collective.parameter_server.variables other than split: how many servers hold a variable
// of each bucket (its push and pull reach those only: allreduce_parameter_server.cpp), the
// variables placed as the run places them (plan/planner.cpp). Empty: every server, every
// bucket; so with per_node, whose servers the platform's nodes multiply.
std::vector<int> servers_per_bucket(const Scenario& scenario, int servers, const std::vector<Bucket>& buckets) {
  const ParameterServerSpec& spec = scenario.collective.parameter_server;
  if (spec.variables == VariablePlacement::split || spec.per_node || buckets.empty()) return {};
  const std::vector<Layer>& layers = scenario.training.layers;
  const std::vector<int> server_of = place_variables(layers, spec.variables, servers);
  std::vector<int> counts;
  for (const Bucket& bucket : buckets) {
    std::vector<int> holding;
    for (const ServerPiece& piece : bucket_pieces(layers, bucket, server_of)) holding.push_back(piece.server);
    std::sort(holding.begin(), holding.end());
    counts.push_back(static_cast<int>(std::unique(holding.begin(), holding.end()) - holding.begin()));
  }
  return counts;
}

// Why every bucket's data is held for the whole run (carries_buckets_in_flight is false).
std::string whole_buckets_because(const Scenario& scenario) {
  const TrainingSpec& training = scenario.training;
  std::string why = "the algorithm's switch or server actors";
  if (training.sharding != Sharding::none) why = fmt::format("training.sharding {}", sharding_names().name(training.sharding));
  else if (training.has_model()) why = "the training model";
  else if (scenario.recovery.policy != RecoveryPolicy::none) why = "recovery";
  else if (scenario.collective.kind != Collective::allreduce) why = "a collective other than allreduce";
  return fmt::format(" (every bucket held for the whole run: {} needs it)", why);
}

// The default carry gives every chunk of every part (p x channels per bucket) and every
// layer an element (plan/payload.hpp): when that alone passes the buffers' limit, the error
// says so, and what would lower it.
[[noreturn]] void refuse_default_carry(const Scenario& scenario, int p, const Payload& payload, double bytes) {
  const size_t parts = payload.part_logical.size();
  const int channels = std::max(1, scenario.collective.channels);
  const std::string chunks = channels > 1 ? fmt::format("{} x {} channels", p, channels) : fmt::format("{}", p);
  // The buffers grow with the carried elements: 90% of the count that would just fit, a
  // whole number per bucket.
  const double fits = static_cast<double>(payload.carried_elems) * max_carried_bytes / bytes * 0.9;
  const uint64_t suggested = std::max<uint64_t>(parts, static_cast<uint64_t>(fits / static_cast<double>(parts)) * parts);
  throw InputError(fmt::format(
      "workers: {} on {} ranks: giving each of the {} chunks ({}){} an element takes {} elements per rank, about {} "
      "of buffers over the ranks{}; at most {} (README \"Limits\"): {}fewer ranks{}, or set "
      "collective.carried_elements={} (chunks without an element are simulated all the same, their data not verified)",
      describe_algorithm(scenario), p, static_cast<uint64_t>(p) * static_cast<uint64_t>(channels), chunks,
      parts > 1 ? fmt::format(" of each of the {} buckets", parts) : "", payload.carried_elems, format_size(bytes),
      parts > 1 && !carries_buckets_in_flight(scenario) ? whole_buckets_because(scenario) : "",
      format_size(max_carried_bytes), parts > 1 ? "fewer buckets (a larger training.bucket), " : "",
      channels > 1 ? " or channels" : "", suggested));
}

// The carried elements the ranks hold at once. Whole vectors: each rank's and its input kept
// for verification, a third copy to roll back to. Buckets in flight: each stream's bucket on
// every rank, and up to two results of each stream's buckets waiting for their last rank to
// be verified (an allreduce ends on no rank before every rank has entered it).
double held_elements(const Scenario& scenario, int p, const Payload& payload) {
  if (carries_buckets_in_flight(scenario)) {
    const uint64_t largest = *std::max_element(payload.part_carried.begin(), payload.part_carried.end());
    return 3.0 * scenario.training.streams * p * static_cast<double>(largest);
  }
  const bool rolls_back = scenario.recovery.policy != RecoveryPolicy::none || scenario.training.has_model();
  const double copies = rolls_back ? 3 : 2;
  return copies * p * static_cast<double>(payload.carried_elems);
}

}  // namespace

bool carries_buckets_in_flight(const Scenario& scenario) {
  const TrainingSpec& training = scenario.training;
  if (!training.has_layers() || training.sharding != Sharding::none || training.has_model() ||
      scenario.recovery.policy != RecoveryPolicy::none || scenario.collective.kind != Collective::allreduce ||
      runs_nvls_level(scenario))  // hierarchical's NVSwitch actors
    return false;
  for (const auto& choices : collectives_per_bucket(scenario))
    for (const AlgorithmInfo* algorithm : choices)
      if (algorithm->switch_run != nullptr || algorithm->uses.servers) return false;
  return true;
}

RunSize check_run_size(const Scenario& scenario, int p, const Payload& payload, size_t segment_elems,
                       const std::vector<Bucket>& buckets) {
  check_data_set(scenario, p);
  const CollectiveSpec& collective = scenario.collective;
  CollectiveShape shape{p, payload.carried_elems, segment_elems, collective.channels, planned_servers(collective, p),
                        collective.group_size.value_or(0),
                        collective.parameter_server.placement != ServerPlacement::workers,
                        collective.intra == HierarchyLevel::nvls};
  const std::vector<uint64_t>& vectors = payload.part_logical;
  const std::vector<int> holding = servers_per_bucket(scenario, shape.servers, buckets);
  // With replay, the buckets of one shape are simulated once when they run alone (the
  // limit counts them so; sim/replay.hpp): a stream behind backward simulates them all.
  const bool replays = may_replay(scenario);
  const bool in_flight = carries_buckets_in_flight(scenario);
  const uint64_t largest = *std::max_element(payload.part_carried.begin(), payload.part_carried.end());
  // auto: the most messages of the algorithms it may choose, the least scratch (a choice
  // that needs too much memory does not make the run impossible)
  double per_round = 0, scratch = 0, at_once = 0;
  const AlgorithmInfo* most_at_once = nullptr;
  for (const auto& choices : collectives_per_bucket(scenario)) {
    double most = 0, least = std::numeric_limits<double>::infinity();
    for (const AlgorithmInfo* algorithm : choices) {
      // NCCL's channels: forced, or at most its search's (nccl/tuner.cpp)
      shape.channels = algorithm->uses.nccl ? scenario.nccl.channels.value_or(16) : collective.channels;
      shape.elems = in_flight ? largest : payload.carried_elems;  // scratch for the whole vector at worst
      least = std::min(least, collective_scratch_elements(*algorithm, shape));
      double messages = 0;
      for (size_t i = 0; i < vectors.size(); ++i) {
        if (replays && !first_of_its_shape(payload, i)) continue;
        shape.elems = vectors[i];
        shape.servers = algorithm->uses.servers && i < holding.size() ? holding[i] : planned_servers(collective, p);
        messages += collective_messages(*algorithm, shape);
        // the streams' collectives may all be in flight together
        const double posted = scenario.training.streams * collective_messages_at_once(*algorithm, shape);
        if (posted > at_once) at_once = posted, most_at_once = algorithm;
      }
      most = std::max(most, messages);
    }
    per_round += most;
    scratch = std::max(scratch, least);
  }
  // auto may choose another: only a run that has no candidate within the limit is refused
  if (at_once > max_run_messages_at_once && !chosen_at_run_time(collective.algorithm))
    throw InputError(fmt::format("workers: {} on {} ranks has {:.3g} transfers in flight at once (about {} of "
                                 "SimGrid's state); a run holds at most {:.0e} (README \"Limits\"): use fewer ranks, "
                                 "an algorithm that sends in steps ({}), or `collsim model`",
                                 describe_algorithm(scenario), p, at_once, format_size(at_once * bytes_per_transfer_in_flight),
                                 max_run_messages_at_once,
                                 most_at_once->collective == Collective::alltoall ? "alltoall pairwise" : "ring"));
  const double messages = (replays ? 1 : scenario.training.rounds) * per_round;
  if (messages > max_run_messages)
    throw InputError(fmt::format("workers: {} on {} ranks x {} round(s){} sends {:.3g} messages (about {} at 0.3 M "
                                 "messages/s); a run simulates at most {:.0e} (README \"Limits\"): use fewer ranks "
                                 "or rounds, another algorithm, or `collsim model`",
                                 describe_algorithm(scenario), p, scenario.training.rounds,
                                 vectors.size() > 1 ? fmt::format(" x {} buckets", vectors.size()) : "", messages,
                                 about_minutes(messages / 3e5), max_run_messages));
  const double elements = held_elements(scenario, p, payload) + scratch;
  const double bytes = elements * static_cast<double>(dtype_size(collective.dtype));
  if (bytes > max_carried_bytes && collective.carried_elements)
    throw InputError(fmt::format("collective.carried_elements: {} on {} ranks x {} elements needs about {} of buffers; "
                                 "at most {} (README \"Limits\"): carry fewer elements or use fewer ranks",
                                 describe_algorithm(scenario), p, payload.carried_elems, format_size(bytes),
                                 format_size(max_carried_bytes)));
  if (bytes > max_carried_bytes) refuse_default_carry(scenario, p, payload, bytes);
  RunSize size;
  size.messages = messages;
  size.buffer_bytes = bytes;
  return size;
}

}  // namespace collsim
