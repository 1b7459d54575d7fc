// collsim: simulate collective communication algorithms on SimGrid platforms.
// This file only turns command-line flags into library calls (src/report/commands.cpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <iostream>

#include "report/commands.hpp"
#include "util/errors.hpp"

namespace {

constexpr int exit_bad_input = 2;

// Flags that stand for scenario fields, applied after --set (flags win).
struct ScenarioFlags {
  std::string collective, algorithm, workers, size, topology, network, rounds;

  void append_overrides(std::vector<std::string>& overrides) const {
    const std::pair<const char*, const std::string*> fields[]{
        {"collective.kind", &collective}, {"collective.algorithm", &algorithm}, {"workers", &workers},
        {"collective.size", &size},       {"topology", &topology},              {"network", &network},
        {"training.rounds", &rounds}};
    for (const auto& [path, value] : fields)
      if (!value->empty()) overrides.push_back(fmt::format("{}={}", path, *value));
  }
};

void add_scenario_flags(CLI::App* command, ScenarioFlags& flags, collsim::RunRequest& request) {
  command->add_option("scenario", request.scenario_path, "Scenario file (JSON); flags override its fields");
  command->add_option("--collective", flags.collective, "allreduce (default), broadcast or reduce");
  command->add_option("--algorithm", flags.algorithm, "Algorithm name (`collsim list algorithms`)");
  command->add_option("--workers", flags.workers, "Number of ranks P (default: every host, or 8)");
  command->add_option("--size", flags.size, "Logical bytes per rank, e.g. 64MiB, 30MB, 4096");
  command->add_option("--topology", flags.topology, "Platform file (topologies/*.xml) or generator star:P[:BW[:LAT]]");
  command->add_option("--network", flags.network, "ideal (alpha-beta exact, default) or realistic (SimGrid's TCP)");
  command->add_option("--rounds", flags.rounds, "Repeat compute + collective N times");
  // One value per occurrence, so that a scenario file after --set is not taken as a value.
  command->add_option("--set", request.overrides, "Override any scenario field: key.path=value (repeatable)")
      ->allow_extra_args(false);
  command->add_option("--cfg", request.cfg, "Pass a SimGrid option KEY:VALUE through (repeatable)")
      ->allow_extra_args(false);
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
      "  collsim model --algorithm ring --workers 64 --size 1GiB --bandwidth 10GBps --latency 1us\n"
      "  collsim list algorithms\n"
      "  collsim compare tests/baselines out/baselines --format markdown\n"
      "Docs: README.md, docs/scenario-format.md, docs/trace-format.md, docs/algorithms.md");
  app.set_version_flag("--version", COLLSIM_VERSION);

  collsim::RunRequest run_request;
  ScenarioFlags run_flags;
  std::string detail;
  CLI::App* run = app.add_subcommand("run", "Simulate one scenario and print its summary");
  add_scenario_flags(run, run_flags, run_request);
  run->add_option("--trace", run_request.trace_path, "Write the JSON trace (collsim-trace/1) to this file");
  run->add_option("--detail", detail, "full: list every message in the trace, however many")
      ->check(CLI::IsMember({"full"}));
  run->add_flag("--quiet,-q", run_request.quiet, "Print nothing but errors");
  run->add_flag("--baseline", run_request.baseline,
                "Also run the scenario without its faults and report the time lost to them");

  collsim::RunRequest validate_request;
  ScenarioFlags validate_flags;
  CLI::App* validate = app.add_subcommand("validate", "Check a scenario (and its platform) without running it");
  add_scenario_flags(validate, validate_flags, validate_request);

  std::string list_what;
  CLI::App* list = app.add_subcommand("list", "List algorithms, topologies or ready scenarios");
  list->add_option("what", list_what, "algorithms | topologies | scenarios (default: all three)");

  collsim::ModelRequest model_request;
  CLI::App* model = app.add_subcommand("model", "Predict a collective's time from the alpha-beta formulas alone");
  model->add_option("--collective", model_request.collective, "allreduce (default), broadcast or reduce");
  model->add_option("--algorithm", model_request.algorithm, "Algorithm name (default: ring / binomial)");
  model->add_option("--workers", model_request.workers, "Number of ranks P")->required();
  model->add_option("--size", model_request.size, "Bytes per rank, e.g. 1GiB")->required();
  model->add_option("--bandwidth", model_request.bandwidth, "Link bandwidth B, e.g. 10GBps or 100Gbps")->required();
  model->add_option("--latency", model_request.latency, "Latency alpha of one message, e.g. 1us")->required();
  model->add_option("--dtype", model_request.dtype, "float32 (default), float64 or int32");
  model->add_option("--segment", model_request.segment, "Segment size of pipelined algorithms (default 1MiB)");

  // CLI11 would only say "A subcommand is required" for a mistyped command.
  const std::vector<std::string> commands{"run", "validate", "list", "model", "compare", "baseline"};
  if (argc > 1 && argv[1][0] != '-' && std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
    std::cerr << fmt::format("collsim: error: unknown command '{}'; allowed: run, validate, list, model, compare, baseline "
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

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const CLI::ParseError& error) {
    std::cerr << fmt::format("collsim: error: {} (see collsim --help)\n", error.what());
    return exit_bad_input;
  }

  try {
    if (run->parsed()) {
      run_flags.append_overrides(run_request.overrides);
      run_request.full_detail = detail == "full";
      return collsim::command_run(run_request);
    }
    if (validate->parsed()) {
      validate_flags.append_overrides(validate_request.overrides);
      return collsim::command_validate(validate_request);
    }
    if (list->parsed()) return collsim::command_list(list_what);
    if (model->parsed()) return collsim::command_model(model_request);
    if (compare->parsed()) return collsim::command_compare(compare_request);
    if (baseline_update->parsed()) return collsim::command_baseline_update(scenarios_dir, baselines_dir, baseline_quiet);
  } catch (const collsim::InputError& error) {
    std::cerr << "collsim: error: " << error.what() << "\n";
    return exit_bad_input;
  } catch (const std::exception& error) {
    std::cerr << "collsim: the run failed: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
