// `collsim run`: simulate one scenario (or one per size with --sizes) and print its summary.
#include <memory>

#include "cli/command.hpp"
#include "cli/scenario_flags.hpp"
#include "cli/validators.hpp"
#include "util/errors.hpp"

namespace collsim::cli {
namespace {

// What `run` writes: the trace, the pictures, and how many single messages they keep.
struct OutputFlags {
  std::string detail, kept_messages;
  CLI::Option* messages = nullptr;

  void add_to(CLI::App* run, RunRequest& request) {
    run->add_option("--trace", request.trace_path, "Write the JSON trace (collsim-trace/2) to this file (with parallelism: the layout, each "
                    "communicator's groups and times, a step's figures)");
    run->add_option("--svg", request.svg_path, "Draw the timeline of the run (SVG); of a parallel run, its lanes");
    run->add_option("--html", request.html_path, "Write a self-contained HTML report of the run (with parallelism: the figures and one lane per "
                    "communicator per rank)");
    run->add_option("--perfetto", request.perfetto_path,
                    "Write Chrome trace events (JSON) for ui.perfetto.dev or chrome://tracing (with parallelism: "
                    "one lane per communicator per rank)");
    messages = run->add_option("--messages", kept_messages,
                               "Single messages kept for the trace's list, timeline arrows, step-through and Perfetto "
                               "flows: all, none or N (default 20000). A run with more lists one entry per step and "
                               "keeps the first N as a sample; totals per step, rank and link always count every message");
    run->add_option("--detail", detail, "full: the same as --messages all")->check(CLI::IsMember({"full"}));
  }

  void apply(RunRequest& request) const {
    if (detail == "full" && messages->count() > 0)
      throw InputError("--detail full is --messages all: give one of them");
    if (detail == "full") request.kept_messages = keep_every_message;
    if (messages->count() > 0) request.kept_messages = parse_kept_messages(kept_messages);
  }
};

// --quiet and the nccl-tests-style size table.
void add_quiet_and_size_table_flags(CLI::App* run, RunRequest& request) {
  run->add_flag("--quiet,-q", request.quiet, "Print nothing but errors");
  run->add_flag("--progress", request.progress,
                "Print a line on stderr when the run starts simulating and as each round starts (simulated and wall "
                "time); with --quiet, only these lines and errors");
  run->add_option("--sizes", request.sizes,
                  "FROM:TO[:xFACTOR], e.g. 8:1G or 8B:1GiB:x4 (as nccl-tests' -b, -e, -f: K, M and G count in 1024s; "
                  "the factor is 2 unless given): one run per size (in parallel processes), printed as nccl-tests' "
                  "table: size, count, type, redop, time, algbw, busbw, #wrong, the algorithm that ran (auto's choice per "
                  "size), then the average busbw (once: in place and out of place take the same simulated time)");
  run->add_option("--csv", request.csv_path, "With --sizes: also write the table's rows to this CSV file");
  run->add_option("--jobs", request.jobs, "With --sizes: runs at once (default: one per core)")
      ->check(in_range(1, 1024));
}

struct RunFlags {
  RunRequest request;
  ScenarioFlags scenario;
  OutputFlags outputs;
};

}  // namespace

Command add_run_command(CLI::App& app) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* run = app.add_subcommand("run", "Simulate one scenario and print its summary");
  add_scenario_flags(run, flags->scenario, flags->request);
  flags->outputs.add_to(run, flags->request);
  add_quiet_and_size_table_flags(run, flags->request);
  run->add_flag("--baseline", flags->request.baseline,
                "Also run the scenario without its faults and report the time lost to them");
  return {run, [flags] {
            flags->scenario.append_overrides(flags->request.overrides);
            flags->outputs.apply(flags->request);
            return command_run(flags->request);
          }};
}

}  // namespace collsim::cli
