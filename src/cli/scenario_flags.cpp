#include "cli/scenario_flags.hpp"

#include <fmt/format.h>

#include "platform/generator_spec.hpp"
#include "util/suggest.hpp"

namespace collsim::cli {

std::string topology_help() {
  std::vector<std::string> syntaxes;
  for (const auto& family : generator_families()) syntaxes.push_back(family.syntax);
  return "Platform file (topologies/*.xml) or generator: " + join(syntaxes) +
         " (`collsim list topologies`, docs/topologies.md)";
}

void ScenarioFlags::append_overrides(std::vector<std::string>& overrides) const {
  const std::pair<const char*, const std::string*> fields[]{
      {"collective.kind", &collective}, {"collective.algorithm", &algorithm}, {"workers", &workers},
      {"collective.size", &size},       {"topology", &topology},              {"network", &network},
      {"training.rounds", &rounds},     {"collective.auto", &auto_by},       {"message_overhead", &overhead},
      {"collective.dtype", &dtype},     {"collective.op", &op},               {"collective.channels", &channels},
      {"collective.reduce_bandwidth", &reduce_bandwidth}};
  for (const auto& [path, value] : fields)
    if (!value->empty()) overrides.push_back(fmt::format("{}={}", path, *value));
}

void add_scenario_flags(CLI::App* command, ScenarioFlags& flags, RunRequest& request) {
  command->add_option("scenario", request.scenario_path, "Scenario file (JSON); flags override its fields. A \"parallelism\" block (tensor, pipeline, "
                      "data, expert, collectives) runs collectives on concurrent tensor/pipeline/data/expert "
                      "communicators, --set parallelism.tensor=4 changes the layout (docs/parallelism.md)");
  command->add_option("--collective", flags.collective, "allreduce (default), broadcast, reduce, reduce-scatter, allgather or alltoall");
  command->add_option("--algorithm", flags.algorithm,
                      "Algorithm name (`collsim list algorithms`), or auto: the best cost formula on this platform, or "
                      "nccl: what NCCL's tuner would run on GPUs (--set nccl.algo=Ring|Tree|NVLS|NVLSTree|CollNetDirect|CollNetChain, "
                      "nccl.proto=Simple|LL|LL128, nccl.channels=N force it; docs/nccl.md)");
  command->add_option("--auto", flags.auto_by,
                      "How --algorithm auto chooses: model (cost formulas, default) or simulate (a short simulation "
                      "of every candidate on this platform; costs one run each)");
  command->add_option("--workers", flags.workers, "Number of ranks P (default: every host, or 8)");
  command->add_option("--size", flags.size, "Logical bytes per rank, e.g. 64MiB, 30MB, 4096");
  command->add_option("--dtype", flags.dtype,
                      "Element type: float32 (default), float64, bfloat16, float16, int32, int64, int8 or uint8, "
                      "or PyTorch's and NCCL's names: bf16, fp16, half, float, fp32, double, fp64, int, long, char "
                      "(16-bit floats round every operation to the type, integers wrap around)");
  command->add_option("--op", flags.op,
                      "Reduction: sum (default), prod, min, max or avg (nccl-tests' -o; collective.op)");
  command->add_option("--channels", flags.channels,
                      "ring and hierarchical allreduce, ring reduce-scatter and allgather (and ZeRO's halves): "
                      "split the vector over K rings at once, NCCL's channels (default 1); channel c turns each "
                      "node's ring by c GPUs so that the channels cross nodes through different NICs");
  command->add_option("--reduce-bandwidth", flags.reduce_bandwidth,
                      "Bytes per second a rank reduces, e.g. 200GBps: each reduction of m bytes takes m / this on "
                      "the reducing rank (default: reductions are free)");
  command->add_option("--topology", flags.topology, topology_help());
  command->add_option("--network", flags.network, "ideal (alpha-beta exact, default) or realistic (SimGrid's TCP)");
  command->add_option("--overhead", flags.overhead,
                      "Per-message overhead o (LogP), e.g. 1us: a rank's messages leave one after another (default 0)");
  command->add_option("--rounds", flags.rounds, "Repeat compute + collective N times");
  // One value per occurrence, so that a scenario file after --set is not taken as a value.
  command->add_option("--set", request.overrides,
                      "Override any scenario field: key.path=value (repeatable); e.g. training.replay=false simulates "
                      "every bucket or round collective, none replayed from an identical one (docs/training.md#replay); "
                      "nccl.launch=collective|step: collsim's own algorithm on GPUs stands in for NCCL's one-kernel "
                      "collective (one launch) or runs alone on send/recv (a launch per dependent step; default: "
                      "collective with training or parallelism, else step; docs/nccl.md)")
      ->allow_extra_args(false);
  command->add_option("--cfg", request.cfg, "Pass a SimGrid option KEY:VALUE through (repeatable)")
      ->allow_extra_args(false);
}

}  // namespace collsim::cli
