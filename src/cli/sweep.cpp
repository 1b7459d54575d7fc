// `collsim sweep`: a scenario over axes of values, each point in its own process; and its
// subcommands `plot` (a results table as an SVG) and `merge` (the tables of shards).
#include <memory>

#include "cli/command.hpp"
#include "cli/validators.hpp"
#include "report/layout_search.hpp"
#include "sweep/plot.hpp"
#include "sweep/runner.hpp"
#include "sweep/show.hpp"
#include "util/errors.hpp"

namespace collsim::cli {
namespace {

Command add_sweep_plot(CLI::App* sweep) {
  struct Flags {
    std::string results, out;
    PlotSpec spec;
    std::vector<std::string> references;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* plot = sweep->add_subcommand("plot", "Draw a results table as an SVG line plot");
  plot->add_option("results", flags->results, "Results table (.csv or .json)")->required();
  plot->add_option("--plot", flags->out, "The SVG file to write")->required();
  plot->add_option("--x", flags->spec.x, "Axis on the x axis (default: the first numeric axis)");
  plot->add_option("--y", flags->spec.y, "Metric on the y axis (default: simulated_time, the whole run)");
  plot->add_option("--series", flags->spec.series, "Axis that makes one line per value (default: all others)");
  plot->add_option("--title", flags->spec.title, "The picture's title");
  plot->add_option("--x-scale", flags->spec.x_scale, "auto (log when the values span decades), linear or log");
  plot->add_option("--y-scale", flags->spec.y_scale, "auto (log when the values span decades), linear or log");
  plot->add_option("--bound", flags->spec.bound, "The dotted bound: lower_bound (default), topology_bound or none");
  plot->add_option("--reference", flags->references,
                   "A labelled horizontal line, LABEL=VALUE: a value in the y metric's unit (\"link B=10GBps\") or a "
                   "trace's summary figure (\"no recovery=out/run.json\", \"fault-free=out/run.json:baseline_time\"); "
                   "repeatable");
  plot->add_flag("--ideal", flags->spec.ideal, "Also draw ideal scaling: each line's first point times x / x0");
  return {plot, [flags] {
            check_plot_spec(flags->spec);
            for (const auto& text : flags->references)
              flags->spec.references.push_back(parse_plot_reference(text, flags->spec.y, "--reference"));
            return plot_sweep_results(flags->results, flags->out, flags->spec);
          }};
}

Command add_sweep_show(CLI::App* sweep) {
  struct Flags {
    std::string results;
    ShowSpec spec;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* show = sweep->add_subcommand("show", "Print a results table in human units (ms, GB/s, MiB), one line per point");
  show->add_option("results", flags->results, "Results table (.csv or .json)")->required();
  show->add_option("--metrics", flags->spec.metrics,
                   "The metric columns to show, comma-separated (default: simulated and collective time, model, "
                   "efficiency, busbw, and those of training, recovery and failures that have values)")
      ->delimiter(',');
  show->add_option("--sort", flags->spec.sort, "Sort by this column (an axis or a shown metric; default: point order)");
  return {show, [flags] { return show_sweep_results(flags->results, flags->spec); }};
}

Command add_sweep_merge(CLI::App* sweep) {
  struct Flags {
    std::vector<std::string> parts;
    std::string out = "results.csv";
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* merge = sweep->add_subcommand("merge", "Join the results of sweep shards into one table");
  merge->add_option("parts", flags->parts, "Result tables of the shards")->required();
  merge->add_option("--out", flags->out, "Merged table (.csv or .json)");
  return {merge, [flags] { return merge_sweep_results(flags->parts, flags->out); }};
}

// `collsim sweep layouts`: every tensor x pipeline x data (x expert) layout of a model on a
// GPU cluster, the ones that fit memory ranked by their step time.
Command add_sweep_layouts(CLI::App* sweep) {
  auto request = std::make_shared<LayoutSearchRequest>();
  CLI::App* layouts = sweep->add_subcommand(
      "layouts", "Rank the tensor x pipeline x data (x expert) layouts of a transformer that fit a GPU cluster's memory");
  CLI::Option* scenario = layouts->add_option(
      "--scenario", request->scenario,
      "A scenario of a training step (parallelism.step): its topology, model and shape, GPU, efficiency, sequence "
      "parallelism, ZeRO stage and scatter/gather in place of --model, --topology and their flags; --simulate runs it "
      "with each layout in place of its own");
  layouts->add_option("--model", request->model, "A transformer preset: gpt3-175b, llama3-8b, llama3-70b, llama3-405b, "
                                                 "mixtral-8x7b, tiny (docs/training.md#transformer-presets); required "
                                                 "without --scenario")
      ->excludes(scenario);
  layouts->add_option("--topology", request->topology,
                      "The GPU cluster: dgx-a100:N, dgx-h100:N, dgx-h200:N, gb200-nvl72:R or rail:N:G[...]; required "
                      "without --scenario")
      ->excludes(scenario);
  layouts->add_option("--efficiency", request->efficiency,
                      "The fraction of the GPU's dense bf16 peak its FLOPs run at, as you state it (default 1: the peak)")
      ->excludes(scenario);
  layouts->add_option("--top", request->top, "Layouts printed (default 10)")->check(in_range(1, 1000000));
  layouts->add_option("--zero", request->zero_stage, "ZeRO stage over the data dimension: 0 (default), 1, 2 or 3")
      ->excludes(scenario);
  layouts->add_flag("--sequence-parallel", request->sequence_parallel, "Sequence parallelism in the tensor groups")
      ->excludes(scenario);
  layouts->add_option("--recompute", request->recompute,
                      "none, selective or full for every layout (default: the least that fits, per layout)");
  layouts->add_option("--micro-batch", request->micro_batch, "Samples per micro-batch (default: the preset's)")
      ->check(in_range(1, 1 << 20))
      ->excludes(scenario);
  layouts->add_option("--global-batch", request->global_batch, "Samples per step (default: the preset's)")
      ->check(in_range(1, 1 << 30))
      ->excludes(scenario);
  layouts->add_option("--sequence", request->sequence, "Tokens per sample (default: the preset's)")->check(in_range(1, 1 << 24))
      ->excludes(scenario);
  layouts->add_option("--max-virtual-stages", request->max_virtual_stages,
                      "Model chunks per pipeline stage tried, at most (Megatron's interleaved 1F1B; default: every count "
                      "Megatron allows; 1: plain 1F1B only)")
      ->check(in_range(1, 1 << 20));
  layouts->add_option("--out", request->out, "Also write every layout enumerated as CSV");
  layouts->add_option("--simulate", request->simulate,
                      "Also run the first N layouts by the estimate through the simulated step (parallelism.step: every "
                      "collective on real buffers, communicators sharing the network), each in a process of its own, and "
                      "rank them by their simulated step time")
      ->check(in_range(1, 1000));
  layouts->add_option("--jobs", request->jobs, "With --simulate: simulations at once (default: one per core)")
      ->check(in_range(1, 1024));
  layouts->add_option("--max-messages", request->max_messages,
                      "With --simulate: do not simulate a layout whose step sends more messages than this, counted "
                      "before simulating (default 10000000: about half a minute here; a simulated message costs about "
                      "the same whatever its size)")
      ->check(in_range(1, 1LL << 50));
  return {layouts, [request] { return command_layout_search(*request); }};
}

}  // namespace

std::vector<Command> add_sweep_commands(CLI::App& app) {
  struct Flags {
    std::string path, shard;
    SweepOptions options;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* sweep = app.add_subcommand("sweep", "Run a scenario over axes of values (SWEEP.json), each point in its own process");
  sweep->add_option("sweep", flags->path, "Sweep file: a base scenario and axes (docs/sweeps.md)");
  sweep->add_option("--out", flags->options.out, "Results table: .csv (default results.csv) or .json");
  sweep->add_option("--jobs,-j", flags->options.jobs, "Points run at once (default: the number of cores)")
      ->check(in_range(1, 1024));
  sweep->add_option("--shard", flags->shard, "Run only shard K of N (K/N), e.g. for a Slurm job array");
  sweep->add_flag("--resume", flags->options.resume, "Skip the points already in --out");
  sweep->add_flag("--quiet,-q", flags->options.quiet, "No progress, only errors");
  sweep->add_option("--plot", flags->options.plot,
                    "Also draw simulated time over the first numeric axis (SVG), or what the sweep file's \"plot\" asks");
  sweep->add_flag("--plan", flags->options.plan, "Check every point and list them, run nothing");
  Command run_sweep_command{sweep, [flags] {
                              if (flags->path.empty()) throw InputError("sweep: give the sweep file (SWEEP.json)");
                              if (!flags->shard.empty()) flags->options.shard = parse_shard(flags->shard);
                              return run_sweep(flags->path, flags->options);
                            }};
  return {add_sweep_plot(sweep), add_sweep_show(sweep), add_sweep_merge(sweep), add_sweep_layouts(sweep), run_sweep_command};
}

}  // namespace collsim::cli
