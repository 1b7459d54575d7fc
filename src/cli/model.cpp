// `collsim model`: predict a collective's time from cost formulas or a platform's routes.
#include <memory>

#include "cli/command.hpp"
#include "cli/validators.hpp"
#include "plan/run_limits.hpp"
#include "report/commands.hpp"
#include "scenario/scenario.hpp"

namespace collsim::cli {

Command add_model_command(CLI::App& app) {
  auto request = std::make_shared<ModelRequest>();
  ModelRequest& model_request = *request;
  CLI::App* model = app.add_subcommand(
      "model", "Predict a collective's time without simulating: each algorithm's schedule priced on a platform's own "
               "routes (--topology, links shared by max-min fairness) or on a contention-free star (--bandwidth, "
               "--latency: the alpha-beta formulas). No run limit applies (nothing is simulated): up to 1,000,000 "
               "hosts, schedules of at most 2^23 messages (2^18 in one step); see README \"Limits\"");
  model->add_option("--collective", model_request.collective, "allreduce (default), broadcast, reduce, reduce-scatter, allgather or alltoall");
  model->add_option("--algorithm", model_request.algorithm,
                    "Algorithm name (default: ring / binomial), or all: rank every algorithm of the collective");
  model->add_option("--topology", model_request.topology,
                    "A platform (file or generator, e.g. nodes:8:8, fat-tree:2:4,4:1,2:1,1): price every message on "
                    "its real route and print the bottleneck link and the topology bound (replaces --bandwidth and "
                    "--latency)");
  model->add_option("--network", model_request.network,
                    "With --topology: ideal (default; the model matches SimGrid's sharing) or realistic (then only "
                    "an estimate: TCP effects are not modelled)");
  model->add_option("--workers", model_request.workers,
                    "Number of ranks P (with --topology, default: every host, as collsim run; required without)")
      ->check(in_range(1, max_workers));
  model->add_option("--size", model_request.size, "Bytes per rank, e.g. 1GiB")->required();
  model->add_option("--bandwidth", model_request.bandwidth,
                    "Without --topology: link bandwidth B, e.g. 10GBps or 100Gbps");
  model->add_option("--latency", model_request.latency, "Without --topology: latency alpha of one message, e.g. 1us");
  model->add_option("--dtype", model_request.dtype, "float32 (default), float64, bfloat16, float16, int32, int64, int8 or uint8, or bf16, fp16, half, "
                    "float, fp32, double, fp64, int, long, char");
  model->add_option("--segment", model_request.segment, "Segment size of pipelined algorithms (default 1MiB)");
  model->add_option("--overhead", model_request.overhead,
                    "Per-message overhead o, e.g. 1us: a rank's messages leave one after another (default 0)");
  model->add_option("--servers", model_request.servers, "parameter-server: number of servers S, 1 to P (default 1)")
      ->check(in_range(1, max_workers));
  model->add_option("--group-size", model_request.group_size,
                    "hierarchical: ranks per group (default: one group of all P ranks)")
      ->check(at_least(1));
  model->add_option("--inter-bandwidth", model_request.inter_bandwidth,
                    "hierarchical: bandwidth of the link between groups (default: --bandwidth)");
  model->add_option("--inter-latency", model_request.inter_latency,
                    "hierarchical: latency alpha of a message between groups (default: --latency)");
  model->add_option("--channels", model_request.channels,
                    "ring and hierarchical allreduce, ring reduce-scatter and allgather: K rings at once, each on "
                    "1/K of the vector (NCCL's channels, default 1)")
      ->check(in_range(1, max_channels));
  model->add_option("--intra", model_request.intra,
                    "hierarchical: the algorithm inside the groups, ring (default) or halving-doubling (a power of "
                    "two of ranks in every group)");
  model->add_option("--inter", model_request.inter,
                    "hierarchical: the algorithm between the groups, ring (default), halving-doubling (a power of "
                    "two of groups) or tree");
  model->add_option("--reduce-bandwidth", model_request.reduce_bandwidth,
                    "Bytes per second a rank reduces, e.g. 200GBps: each reduction of m bytes keeps the reducing "
                    "rank busy m / this before its next step (default: reductions are free)");
  model->add_option("--inter-flows", model_request.inter_flows,
                    "hierarchical: messages between groups that share that link at once (default 1; the group "
                    "size when one NIC per group carries all of its rings)")
      ->check(at_least(1));
  return {model, [request] { return command_model(*request); }};
}

}  // namespace collsim::cli
