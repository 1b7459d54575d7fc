// What `collsim --help` says around the commands: the tool, its exit statuses, examples.
#include "cli/command.hpp"

namespace collsim::cli {
namespace {

const char* const examples =
    "Examples:\n"
    "  collsim run scenarios/quickstart.json --trace build/quickstart.json\n"
    "  collsim run --algorithm ring --workers 16 --size 64MiB --topology star:16 --network ideal\n"
    "  collsim run scenarios/ring-vs-naive-8.json --set collective.algorithm=naive\n"
    "  collsim run --topology nodes:4:8 --size 64MiB    (4 nodes of 8 devices; see collsim list topologies)\n"
    "  collsim run scenarios/labs/lab4-64-straggler.json --set recovery.straggler_threshold=0.3\n"
    "                (faults and recovery: a slow NIC on 1 of 64 ranks; docs/recovery.md)\n"
    "  collsim run scenarios/training/zero3-300m-16gpu.json --set training.overlap=backward\n"
    "                (training: layers and presets, buckets, streams, compute noise, zero2/zero3 sharding, forward\n"
    "                overlap, scaling efficiency; keys in docs/scenario-format.md, docs/training.md)\n"
    "  collsim run --algorithm hierarchical --topology nodes:4:8 --set collective.inter=halving-doubling\n"
    "                (hierarchical's levels: collective.intra ring|halving-doubling|nvls, inter ring|halving-doubling|tree)\n"
    "  collsim run --algorithm parameter-server --topology star:10 --workers 8 --size 30MB --set training.rounds=4\n"
    "                --set training.compute=20ms --set collective.parameter_server.placement=dedicated\n"
    "                --set collective.parameter_server.mode=bounded --set collective.parameter_server.staleness=1\n"
    "                (asynchronous or bounded-staleness servers: collective.parameter_server.mode, docs/training.md)\n"
    "  collsim model --algorithm ring --workers 64 --size 1GiB --bandwidth 10GBps --latency 1us\n"
    "  collsim model --algorithm all --workers 64 --size 1GiB --topology nodes:8:8   (ranked on real routes)\n"
    "  collsim model --algorithm hierarchical --workers 64 --group-size 8 --size 1GiB --bandwidth 100GBps --latency 1us\n"
    "                --inter-bandwidth 25GBps --inter-latency 5us --inter-flows 8\n"
    "  collsim list algorithms\n"
    "  collsim compare tests/baselines out/baselines --format markdown\n"
    "Docs: README.md, docs/scenario-format.md, docs/trace-format.md, docs/algorithms.md, docs/topologies.md, "
    "docs/recovery.md, docs/training.md";

}  // namespace

void describe_app(CLI::App& app) {
  app.description(
      "collsim: simulate collective communication algorithms (reduce, broadcast, allreduce) on real buffers over "
      "SimGrid network platforms.\nExit status: 0 success, 1 the run failed (verification), 2 bad input or usage.");
  app.require_subcommand(1);
  app.footer(examples);
  app.set_version_flag("--version", COLLSIM_VERSION);
}

}  // namespace collsim::cli
