// collsim: simulate collective communication algorithms on SimGrid platforms.
// This file only turns command-line flags into library calls (src/report/commands.cpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <iostream>

#include "platform/generator_spec.hpp"
#include "report/commands.hpp"
#include "sweep/plot.hpp"
#include "sweep/runner.hpp"
#include "util/atomic_file.hpp"
#include "util/errors.hpp"
#include "util/suggest.hpp"

namespace {

constexpr int exit_bad_input = 2;

std::string topology_help() {
  std::vector<std::string> syntaxes;
  for (const auto& family : collsim::generator_families()) syntaxes.push_back(family.syntax);
  return "Platform file (topologies/*.xml) or generator: " + collsim::join(syntaxes) +
         " (`collsim list topologies`, docs/topologies.md)";
}

// Flags that stand for scenario fields, applied after --set (flags win).
struct ScenarioFlags {
  std::string collective, algorithm, auto_by, workers, size, dtype, topology, network, overhead, rounds, channels,
      reduce_bandwidth;

  void append_overrides(std::vector<std::string>& overrides) const {
    const std::pair<const char*, const std::string*> fields[]{
        {"collective.kind", &collective}, {"collective.algorithm", &algorithm}, {"workers", &workers},
        {"collective.size", &size},       {"topology", &topology},              {"network", &network},
        {"training.rounds", &rounds},     {"collective.auto", &auto_by},       {"message_overhead", &overhead},
        {"collective.dtype", &dtype},     {"collective.channels", &channels},
        {"collective.reduce_bandwidth", &reduce_bandwidth}};
    for (const auto& [path, value] : fields)
      if (!value->empty()) overrides.push_back(fmt::format("{}={}", path, *value));
  }
};

// What `run` writes: the trace, the pictures, and how many single messages they keep.
struct OutputFlags {
  std::string detail, kept_messages;
  CLI::Option* messages = nullptr;

  void add_to(CLI::App* run, collsim::RunRequest& request) {
    run->add_option("--trace", request.trace_path, "Write the JSON trace (collsim-trace/2) to this file");
    run->add_option("--svg", request.svg_path, "Draw the timeline of the run (SVG)");
    run->add_option("--html", request.html_path, "Write a self-contained HTML report of the run");
    run->add_option("--perfetto", request.perfetto_path,
                    "Write Chrome trace events (JSON) for ui.perfetto.dev or chrome://tracing");
    messages = run->add_option("--messages", kept_messages,
                               "Single messages kept for the trace's list, timeline arrows, step-through and Perfetto "
                               "flows: all, none or N (default 20000). A run with more lists one entry per step and "
                               "keeps the first N as a sample; totals per step, rank and link always count every message");
    run->add_option("--detail", detail, "full: the same as --messages all")->check(CLI::IsMember({"full"}));
  }

  void apply(collsim::RunRequest& request) const {
    if (detail == "full" && messages->count() > 0)
      throw collsim::InputError("--detail full is --messages all: give one of them");
    if (detail == "full") request.kept_messages = collsim::keep_every_message;
    if (messages->count() > 0) request.kept_messages = collsim::parse_kept_messages(kept_messages);
  }
};

void add_scenario_flags(CLI::App* command, ScenarioFlags& flags, collsim::RunRequest& request) {
  command->add_option("scenario", request.scenario_path, "Scenario file (JSON); flags override its fields");
  command->add_option("--collective", flags.collective, "allreduce (default), broadcast, reduce, reduce-scatter, allgather or alltoall");
  command->add_option("--algorithm", flags.algorithm,
                      "Algorithm name (`collsim list algorithms`), or auto: the best cost formula on this platform");
  command->add_option("--auto", flags.auto_by,
                      "How --algorithm auto chooses: model (cost formulas, default) or simulate (a short simulation "
                      "of every candidate on this platform; costs one run each)");
  command->add_option("--workers", flags.workers, "Number of ranks P (default: every host, or 8)");
  command->add_option("--size", flags.size, "Logical bytes per rank, e.g. 64MiB, 30MB, 4096");
  command->add_option("--dtype", flags.dtype,
                      "Element type: float32 (default), float64, bfloat16, float16, int32, int64, int8 or uint8 "
                      "(16-bit floats round every operation to the type, integers wrap around)");
  command->add_option("--channels", flags.channels,
                      "ring and hierarchical allreduce: split the vector over K rings at once, NCCL's channels "
                      "(default 1); channel c turns each node's ring by c GPUs so that the channels cross nodes "
                      "through different NICs");
  command->add_option("--reduce-bandwidth", flags.reduce_bandwidth,
                      "Bytes per second a rank reduces, e.g. 200GBps: each reduction of m bytes takes m / this on "
                      "the reducing rank (default: reductions are free)");
  command->add_option("--topology", flags.topology, topology_help());
  command->add_option("--network", flags.network, "ideal (alpha-beta exact, default) or realistic (SimGrid's TCP)");
  command->add_option("--overhead", flags.overhead,
                      "Per-message overhead o (LogP), e.g. 1us: a rank's messages leave one after another (default 0)");
  command->add_option("--rounds", flags.rounds, "Repeat compute + collective N times");
  // One value per occurrence, so that a scenario file after --set is not taken as a value.
  command->add_option("--set", request.overrides, "Override any scenario field: key.path=value (repeatable)")
      ->allow_extra_args(false);
  command->add_option("--cfg", request.cfg, "Pass a SimGrid option KEY:VALUE through (repeatable)")
      ->allow_extra_args(false);
}

// `collsim model`: its flags fill `request`.
CLI::App* add_model_command(CLI::App& app, collsim::ModelRequest& model_request) {
  CLI::App* model = app.add_subcommand(
      "model", "Predict a collective's time without simulating: each algorithm's schedule priced on a platform's own "
               "routes (--topology, links shared by max-min fairness) or on a contention-free star (--bandwidth, "
               "--latency: the alpha-beta formulas)");
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
  model->add_option("--workers", model_request.workers, "Number of ranks P")->required();
  model->add_option("--size", model_request.size, "Bytes per rank, e.g. 1GiB")->required();
  model->add_option("--bandwidth", model_request.bandwidth,
                    "Without --topology: link bandwidth B, e.g. 10GBps or 100Gbps");
  model->add_option("--latency", model_request.latency, "Without --topology: latency alpha of one message, e.g. 1us");
  model->add_option("--dtype", model_request.dtype, "float32 (default), float64, bfloat16, float16, int32, int64, int8 or uint8");
  model->add_option("--segment", model_request.segment, "Segment size of pipelined algorithms (default 1MiB)");
  model->add_option("--overhead", model_request.overhead,
                    "Per-message overhead o, e.g. 1us: a rank's messages leave one after another (default 0)");
  model->add_option("--servers", model_request.servers, "parameter-server: number of servers S, 1 to P (default 1)");
  model->add_option("--group-size", model_request.group_size,
                    "hierarchical: ranks per group (default: one group of all P ranks)");
  model->add_option("--inter-bandwidth", model_request.inter_bandwidth,
                    "hierarchical: bandwidth of the link between groups (default: --bandwidth)");
  model->add_option("--inter-latency", model_request.inter_latency,
                    "hierarchical: latency alpha of a message between groups (default: --latency)");
  model->add_option("--channels", model_request.channels,
                    "ring and hierarchical allreduce: K rings at once, each on 1/K of the vector (NCCL's channels, "
                    "default 1)");
  model->add_option("--reduce-bandwidth", model_request.reduce_bandwidth,
                    "Bytes per second a rank reduces, e.g. 200GBps: a step whose messages are reduced lasts the most "
                    "bytes one rank reduces / this longer (default: reductions are free)");
  model->add_option("--inter-flows", model_request.inter_flows,
                    "hierarchical: messages between groups that share that link at once (default 1; the group "
                    "size when one NIC per group carries all of its rings)");
  return model;
}

// `collsim run`'s output flags: --quiet and the nccl-tests-style size table.
void add_quiet_and_size_table_flags(CLI::App* run, collsim::RunRequest& request) {
  run->add_flag("--quiet,-q", request.quiet, "Print nothing but errors");
  run->add_option("--sizes", request.sizes,
                  "FROM:TO:xFACTOR, e.g. 8B:1GiB:x2: one run per size (in parallel processes), printed as nccl-tests' "
                  "table: size, count, type, redop, time, algbw, busbw, #wrong, then the average busbw");
  run->add_option("--csv", request.csv_path, "With --sizes: also write the table's rows to this CSV file");
  run->add_option("--jobs", request.jobs, "With --sizes: runs at once (default: one per core)")
      ->check(CLI::Range(1, 1024));
}

// `--size ""` or `--trace=` would read as the flag left out (every flag's default is an
// empty string): an empty value is refused instead of silently ignored.
void refuse_empty_values(const CLI::App& app) {
  for (const CLI::App* command : app.get_subcommands()) {
    for (const CLI::Option* option : command->get_options()) {
      const auto& values = option->results();
      if (std::any_of(values.begin(), values.end(), [](const std::string& value) { return value.empty(); }))
        throw collsim::InputError(fmt::format("{}: the value is empty", option->get_name()));
    }
    refuse_empty_values(*command);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"collsim: simulate collective communication algorithms (reduce, broadcast, allreduce) on real "
               "buffers over SimGrid network platforms.\nExit status: 0 success, 1 the run failed "
               "(verification), 2 bad input or usage."};
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  collsim run scenarios/quickstart.json --trace out/quickstart.json\n"
      "  collsim run --algorithm ring --workers 16 --size 64MiB --topology star:16 --network ideal\n"
      "  collsim run scenarios/ring-vs-naive-8.json --set collective.algorithm=naive\n"
      "  collsim run --topology nodes:4:8 --size 64MiB    (4 nodes of 8 devices; see collsim list topologies)\n"
      "  collsim run scenarios/labs/lab4-64-straggler.json --set recovery.straggler_threshold=0.3\n"
      "                (faults and recovery: a slow NIC on 1 of 64 ranks; docs/recovery.md)\n"
      "  collsim model --algorithm ring --workers 64 --size 1GiB --bandwidth 10GBps --latency 1us\n"
      "  collsim model --algorithm all --workers 64 --size 1GiB --topology nodes:8:8   (ranked on real routes)\n"
      "  collsim model --algorithm hierarchical --workers 64 --group-size 8 --size 1GiB --bandwidth 100GBps --latency 1us\n"
      "                --inter-bandwidth 25GBps --inter-latency 5us --inter-flows 8\n"
      "  collsim list algorithms\n"
      "  collsim compare tests/baselines out/baselines --format markdown\n"
      "Docs: README.md, docs/scenario-format.md, docs/trace-format.md, docs/algorithms.md, docs/topologies.md, "
      "docs/recovery.md");
  app.set_version_flag("--version", COLLSIM_VERSION);

  collsim::RunRequest run_request;
  ScenarioFlags run_flags;
  OutputFlags output_flags;
  CLI::App* run = app.add_subcommand("run", "Simulate one scenario and print its summary");
  add_scenario_flags(run, run_flags, run_request);
  output_flags.add_to(run, run_request);
  add_quiet_and_size_table_flags(run, run_request);
  run->add_flag("--baseline", run_request.baseline,
                "Also run the scenario without its faults and report the time lost to them");

  collsim::RunRequest validate_request;
  ScenarioFlags validate_flags;
  CLI::App* validate = app.add_subcommand("validate", "Check a scenario (and its platform) without running it");
  add_scenario_flags(validate, validate_flags, validate_request);

  std::string list_what;
  CLI::App* list =
      app.add_subcommand("list", "List algorithms, topologies, ready scenarios, ready sweeps or the metrics of a run");
  list->add_option("what", list_what,
                   "algorithms | topologies (files, and generators with an example each) | scenarios | sweeps "
                   "(scenarios/**/sweeps/) | metrics (name, unit, which way is better: what compare and sweep "
                   "tables use); default: all but metrics");

  collsim::ModelRequest model_request;
  CLI::App* model = add_model_command(app, model_request);

  collsim::RenderRequest render_request;
  CLI::App* render = app.add_subcommand("render", "Draw the pictures of a trace written by `collsim run --trace`");
  render->add_option("trace", render_request.trace_path,
                     "Trace file (collsim-trace/2), or a sweep's results table with --plot")->required();
  std::string render_plot;
  collsim::PlotSpec render_plot_spec;
  render->add_option("--plot", render_plot, "Results table (sweep --out) as an SVG line plot");
  render->add_option("--x", render_plot_spec.x, "With --plot: axis on the x axis (default: the first numeric axis)");
  render->add_option("--y", render_plot_spec.y, "With --plot: metric on the y axis (default: simulated_time)");
  render->add_option("--series", render_plot_spec.series, "With --plot: axis with one line per value");
  render->add_option("--svg", render_request.svg_path, "Timeline (SVG)");
  render->add_option("--html", render_request.html_path, "Self-contained HTML report");
  render->add_option("--perfetto", render_request.perfetto_path,
                     "Chrome trace events (JSON) for ui.perfetto.dev or chrome://tracing");

  // CLI11 would only say "A subcommand is required" for a mistyped command.
  const std::vector<std::string> commands{"run", "validate", "list", "model", "render", "compare", "baseline", "sweep"};
  if (argc > 1 && argv[1][0] != '-' && std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
    std::cerr << fmt::format("collsim: error: unknown command '{}'; allowed: run, validate, list, model, render, compare, baseline, sweep "
                             "(see collsim --help)\n", argv[1]);
    return exit_bad_input;
  }
  collsim::CompareRequest compare_request;
  CLI::App* compare = app.add_subcommand(
      "compare", "Compare simulated timings against a baseline; exit 1 on a regression or a missing entry");
  compare->add_option("baseline", compare_request.baseline, "Baseline: a trace, baseline file, results table or folder")
      ->required();
  compare->add_option("current", compare_request.current, "Current: the same kinds of input")->required();
  compare->add_option("--tolerance", compare_request.tolerances,
                      "Relative tolerance (default 0.5%), or METRIC=TOL for one metric (repeatable)")
      ->allow_extra_args(false);
  compare->add_flag("--strict", compare_request.strict,
                    "Exit 1 on any change: improvements and new entries as well as regressions and missing entries "
                    "(then the baselines must be updated)");
  compare->add_option("--format", compare_request.format, "text (default), markdown or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));

  std::string scenarios_dir = std::string(COLLSIM_SOURCE_DIR) + "/scenarios";
  std::string baselines_dir = std::string(COLLSIM_SOURCE_DIR) + "/tests/baselines";
  bool baseline_quiet = false;
  CLI::App* baseline = app.add_subcommand("baseline", "Regenerate the baselines of the ready scenarios");
  baseline->require_subcommand(1);
  CLI::App* baseline_update =
      baseline->add_subcommand("update", "Run every scenario and write its baseline (one small JSON file each)");
  baseline_update->add_option("--scenarios", scenarios_dir, "Folder of scenarios (default: the repository's)");
  baseline_update->add_option("--out", baselines_dir, "Folder of baselines (default: tests/baselines)");
  baseline_update->add_flag("--quiet,-q", baseline_quiet, "Print nothing but errors");

  std::string sweep_path, shard;
  collsim::SweepOptions sweep_options;
  CLI::App* sweep = app.add_subcommand("sweep", "Run a scenario over axes of values (SWEEP.json), each point in its own process");
  sweep->add_option("sweep", sweep_path, "Sweep file: a base scenario and axes (docs/sweeps.md)");
  sweep->add_option("--out", sweep_options.out, "Results table: .csv (default results.csv) or .json");
  sweep->add_option("--jobs,-j", sweep_options.jobs, "Points run at once (default: the number of cores)")
      ->check(CLI::Range(1, 1024));
  sweep->add_option("--shard", shard, "Run only shard K of N (K/N), e.g. for a Slurm job array");
  sweep->add_flag("--resume", sweep_options.resume, "Skip the points already in --out");
  sweep->add_flag("--quiet,-q", sweep_options.quiet, "No progress, only errors");
  sweep->add_option("--plot", sweep_options.plot, "Also draw simulated time over the first numeric axis (SVG)");
  sweep->add_flag("--plan", sweep_options.plan, "Check every point and list them, run nothing");
  std::string plot_results, plot_out;
  collsim::PlotSpec plot_spec;
  CLI::App* sweep_plot = sweep->add_subcommand("plot", "Draw a results table as an SVG line plot");
  sweep_plot->add_option("results", plot_results, "Results table (.csv or .json)")->required();
  sweep_plot->add_option("--plot", plot_out, "The SVG file to write")->required();
  sweep_plot->add_option("--x", plot_spec.x, "Axis on the x axis (default: the first numeric axis)");
  sweep_plot->add_option("--y", plot_spec.y, "Metric on the y axis (default: simulated_time)");
  sweep_plot->add_option("--series", plot_spec.series, "Axis that makes one line per value (default: all others)");
  std::vector<std::string> merge_parts;
  std::string merge_out = "results.csv";
  CLI::App* sweep_merge = sweep->add_subcommand("merge", "Join the results of sweep shards into one table");
  sweep_merge->add_option("parts", merge_parts, "Result tables of the shards")->required();
  sweep_merge->add_option("--out", merge_out, "Merged table (.csv or .json)");

  collsim::remove_temporaries_on_interrupt();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const CLI::ParseError& error) {
    std::cerr << fmt::format("collsim: error: {} (see collsim --help)\n", collsim::one_line(error.what()));
    return exit_bad_input;
  }

  try {
    refuse_empty_values(app);
    if (run->parsed()) {
      run_flags.append_overrides(run_request.overrides);
      output_flags.apply(run_request);
      return collsim::command_run(run_request);
    }
    if (validate->parsed()) {
      validate_flags.append_overrides(validate_request.overrides);
      return collsim::command_validate(validate_request);
    }
    if (list->parsed()) return collsim::command_list(list_what);
    if (model->parsed()) return collsim::command_model(model_request);
    if (render->parsed() && !render_plot.empty())
      return collsim::plot_sweep_results(render_request.trace_path, render_plot, render_plot_spec);
    if (render->parsed()) return collsim::command_render(render_request);
    if (compare->parsed()) return collsim::command_compare(compare_request);
    if (sweep_merge->parsed()) return collsim::merge_sweep_results(merge_parts, merge_out);
    if (sweep_plot->parsed()) return collsim::plot_sweep_results(plot_results, plot_out, plot_spec);
    if (sweep->parsed()) {
      if (sweep_path.empty()) throw collsim::InputError("sweep: give the sweep file (SWEEP.json)");
      if (!shard.empty()) sweep_options.shard = collsim::parse_shard(shard);
      return collsim::run_sweep(sweep_path, sweep_options);
    }
    if (baseline_update->parsed()) return collsim::command_baseline_update(scenarios_dir, baselines_dir, baseline_quiet);
  } catch (const collsim::InputError& error) {
    std::cerr << "collsim: error: " << collsim::one_line(error.what()) << "\n";
    return exit_bad_input;
  } catch (const std::bad_alloc&) {
    std::cerr << "collsim: error: out of memory (see the limits in the README; carry fewer elements or use fewer "
                 "ranks)\n";
    return exit_bad_input;
  } catch (const std::exception& error) {
    std::cerr << "collsim: the run failed: " << collsim::one_line(error.what()) << "\n";
    return 1;
  }
  return 0;
}
