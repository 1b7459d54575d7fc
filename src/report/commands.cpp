#include "report/commands.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <optional>
#include <simgrid/s4u/Engine.hpp>
#include <sstream>

#include "algorithms/algorithms.hpp"
#include "algorithms/hierarchy.hpp"
#include "algorithms/registry.hpp"
#include "model/contention.hpp"
#include "platform/generator_spec.hpp"
#include "platform/platform.hpp"
#include "report/baseline.hpp"
#include "report/compare.hpp"
#include "parallel/executor.hpp"
#include "parallel/step_perfetto.hpp"
#include "run/metrics.hpp"
#include "run/nccl_auto.hpp"
#include "run/run_scenario.hpp"
#include "run/summary.hpp"
#include "scenario/scenario.hpp"
#include "scenario/settings_read.hpp"
#include "plan/auto_choice.hpp"
#include "plan/input_data.hpp"
#include "plan/model_plan.hpp"
#include "parallel/parallel_plan.hpp"
#include "plan/plan_json.hpp"
#include "plan/planner.hpp"
#include "plan/run_limits.hpp"
#include "sim/simulation.hpp"
#include "sweep/sweep_spec.hpp"
#include "trace/parallel_trace.hpp"
#include "trace/trace.hpp"
#include "util/atomic_file.hpp"
#include "util/child_process.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"
#include "util/suggest.hpp"
#include "report/size_table.hpp"
#include "util/units.hpp"
#include "viz/parallel_report.hpp"
#include "viz/render.hpp"

namespace fs = std::filesystem;

namespace collsim {
namespace {

// The name of an unnamed run from flags only: "cli-" and a digest of the flags (FNV-1a),
// so that two different runs never share an identity in `compare`.
std::string name_of_flags(const std::vector<std::string>& overrides) {
  uint64_t hash = 14695981039346656037ull;
  for (const auto& assignment : overrides)
    for (const char c : assignment + '\n') hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return fmt::format("cli-{:08x}", static_cast<uint32_t>(hash ^ (hash >> 32)));
}

Scenario load_scenario(const RunRequest& request) {
  nlohmann::json document = nlohmann::json::object();
  std::string source_dir;
  if (!request.scenario_path.empty()) {
    document = load_scenario_json(request.scenario_path);
    source_dir = fs::path(request.scenario_path).parent_path().string();
  }
  for (const auto& assignment : request.overrides) apply_override(document, assignment);
  // Unnamed: the file's stem, or a digest of the flags.
  if (document.is_object() && !document.contains("name"))
    document["name"] = request.scenario_path.empty() ? name_of_flags(request.overrides)
                                                     : fs::path(request.scenario_path).stem().string();
  return parse_scenario(document, source_dir);
}

// The first line of a file's opening comment (XML <!-- --> or a JSON "description").
std::string describe_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string contents = text.str();
  if (path.extension() == ".json") {
    try {
      const auto document = nlohmann::json::parse(contents);
      const auto& description = document.value("description", nlohmann::json());
      if (description.is_string()) return description.get<std::string>();
      if (description.is_array() && !description.empty() && description[0].is_string())
        return description[0].get<std::string>();
    } catch (const std::exception&) {
      return "(malformed JSON)";
    }
    return "";
  }
  const auto open = contents.find("<!--");
  if (open == std::string::npos) return "";
  std::stringstream comment(contents.substr(open + 4, contents.find("-->", open) - open - 4));
  for (std::string line; std::getline(comment, line);) {
    const auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos) return line.substr(first);
  }
  return "";
}

// "  HOSTS  LINKS" of a platform file or generator string, counted by building it in a
// child process (SimGrid has one engine per process); `failed` if it cannot be built.
std::string count_hosts_and_links(const std::string& topology, const std::string& failed) {
  const ChildOutcome counts = run_in_child([&] {
    int argc = 2;
    char name[] = "collsim", quiet[] = "--log=root.thresh:critical";
    char* argv[] = {name, quiet, nullptr};
    simgrid::s4u::Engine engine(&argc, argv);
    const PlatformInfo platform = build_platform(engine, topology, "");
    return fmt::format("{:>6} {:>6}", platform.hosts.size(), platform.link_count);
  });
  return counts.exit_code == 0 ? counts.output : failed;
}

// Files with `extension` under `folder`, subfolders included, in name order.
std::vector<fs::path> files_in(const fs::path& folder, const std::string& extension) {
  std::vector<fs::path> files;
  if (fs::is_directory(folder))
    for (const auto& entry : fs::recursive_directory_iterator(folder))
      if (entry.is_regular_file() && entry.path().extension() == extension) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

nlohmann::json baseline_of_scenario(const std::string& path) {
  RunRequest request;
  request.scenario_path = path;
  const Scenario scenario = load_scenario(request);
  nlohmann::json metrics = run_metrics(scenario);
  nlohmann::json rounds = metrics["round_times"];
  // A baseline keeps what compare compares: informational figures would only add noise.
  metrics.erase("round_times");
  metrics.erase("tolerance");
  metrics.erase("algorithm");
  for (const Metric& metric : metric_table())
    if (metric.better == Better::informational) metrics.erase(metric.name);
  return {{"format", baseline_format},
          {"identity", scenario.name},
          {"collsim_version", COLLSIM_VERSION},
          {"metrics", metrics},
          {"round_times", rounds}};
}

uint64_t parse_kept_messages(const std::string& text) {
  if (text == "all") return keep_every_message;
  if (text == "none") return 0;
  const bool digits = !text.empty() && text.size() <= 18 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) throw InputError(fmt::format("--messages: '{}' is not all, none or a number of messages", text));
  return std::stoull(text);
}

namespace {

// Every output of a run checked before it starts (util/atomic_file.hpp); the platform
// file counts among the inputs that no output may replace.
void check_run_outputs(const RunRequest& request, const Scenario& scenario) {
  if (!parse_generator(scenario.topology, "topology"))
    read_input_file(resolve_platform_file(scenario.topology, scenario.source_dir, "topology"), "platform file");
  const std::pair<const std::string*, const char*> outputs[]{{&request.trace_path, "--trace"},
                                                              {&request.svg_path, "--svg"},
                                                              {&request.html_path, "--html"},
                                                              {&request.perfetto_path, "--perfetto"}};
  for (const auto& [path, field] : outputs)
    if (!path->empty()) check_output_path(*path, field);
}

// --sizes: every size's scenario validated before any runs.
int run_sizes(const RunRequest& request) {
  const std::vector<double> sizes = parse_size_range(request.sizes, "--sizes");
  for (const auto& [flag, given] : {std::pair{"--trace", &request.trace_path}, {"--svg", &request.svg_path},
                                    {"--html", &request.html_path}, {"--perfetto", &request.perfetto_path}})
    if (!given->empty())
      throw InputError(fmt::format("--sizes: prints a table of runs; {} takes one run (give --size instead)", flag));
  if (request.baseline) throw InputError("--sizes: prints a table of runs; --baseline takes one run (give --size instead)");
  for (const std::string& override : request.overrides)
    if (override.rfind("collective.size=", 0) == 0)
      throw InputError("--sizes: gives every run its size; --size (or --set collective.size) would be ignored: give one");
  std::vector<Scenario> scenarios;
  for (double size : sizes) {
    RunRequest one = request;
    one.overrides.push_back(fmt::format("collective.size={:.0f}", size));
    scenarios.push_back(load_scenario(one));
  }
  if (!request.csv_path.empty()) check_output_path(request.csv_path, "--csv");
  return run_size_table(scenarios, {request.jobs, request.csv_path, request.quiet});
}

// The step of `scenario` without its faults, in a child (one engine per process): what
// --baseline compares a step with faults against.
double fault_free_step(const Scenario& scenario, const PlanOptions& options) {
  Scenario twin = scenario;
  twin.faults.clear();
  twin.recovery = RecoverySpec{};
  const ChildOutcome child = run_in_child([&] {
    const ParallelOutcome outcome = run_parallel(twin, options);
    if (!outcome.stall.empty()) throw std::runtime_error("the fault-free step stalled: " + outcome.stall);
    return fmt::format("{:.17g}", outcome.step_time);
  });
  if (child.exit_code != 0) throw std::runtime_error("--baseline: " + child.output);
  return std::stod(child.output);
}

// A scenario with parallelism: its collectives at once on their groups (docs/parallelism.md).
int run_parallel_scenario(const RunRequest& request, const Scenario& scenario) {
  if (request.baseline && (!scenario.parallelism.step.given || scenario.faults.empty()))
    throw InputError("--baseline: a parallel run compares a training step with faults against the same step without them; "
                     "give parallelism.step and faults, or leave it out");
  PlanOptions options;
  options.cfg = request.cfg;
  // (a plain double: GCC 12 warned that an optional's value may be read uninitialized)
  const double fault_free = request.baseline ? fault_free_step(scenario, options) : 0.0;
  const ParallelOutcome outcome = run_parallel(scenario, options);
  OutputBatch batch;
  if (!request.trace_path.empty() || !request.html_path.empty() || !request.svg_path.empty()) {
    const nlohmann::json trace = build_parallel_trace(outcome);
    if (!request.trace_path.empty()) write_file_atomically(request.trace_path, trace.dump(1) + "\n", "--trace");
    if (!request.html_path.empty())
      write_file_atomically(request.html_path, viz::parallel_html_report(trace, "the run's trace"), "--html");
    if (!request.svg_path.empty())
      write_file_atomically(request.svg_path, viz::parallel_lanes_svg(trace, "the run's trace"), "--svg");
  }
  if (!request.perfetto_path.empty())
    write_file_atomically(request.perfetto_path,
                          step_perfetto(parallel_intervals(outcome), scenario.name, outcome.step_time).dump(1) + "\n",
                          "--perfetto");
  batch.commit();
  if (!request.quiet) std::cout << format_parallel_summary(outcome) << std::flush;
  if (!request.quiet && request.baseline && outcome.stall.empty()) {
    std::cout << fmt::format("time lost        {} against the fault-free step ({}, --baseline)\n",
                             format_time(outcome.step_time - fault_free), format_time(fault_free));
  }
  if (!outcome.stall.empty()) {
    std::cerr << "collsim: stalled: " << outcome.stall << "\n";
    return 1;
  }
  if (!outcome.verification.verified) {
    std::cerr << "collsim: verification failed: " << outcome.verification.failure << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int command_run(const RunRequest& request) {
  if (request.progress && !request.sizes.empty())
    throw InputError("--progress: follows one run; --sizes prints its table when its runs end: leave one out");
  if (request.progress) enable_progress();
  if (!request.sizes.empty()) return run_sizes(request);
  if (!request.csv_path.empty()) throw InputError("--csv: writes the table of --sizes; give --sizes too");
  if (request.jobs > 0) throw InputError("--jobs: runs the sizes of --sizes at once; give --sizes too");
  const Scenario scenario = load_scenario(request);
  check_run_outputs(request, scenario);
  if (scenario.parallelism.given) return run_parallel_scenario(request, scenario);
  const std::vector<AutoCandidate> trials = auto_trials(scenario, request.cfg);
  std::optional<Baseline> twin;
  if (request.baseline) twin = run_fault_free_twin(scenario, request.cfg, trials);
  const viz::PictureOutputs pictures{request.svg_path, request.html_path, request.perfetto_path};
  // Single messages are only kept for a trace or a picture.
  const bool drawn = !request.trace_path.empty() || pictures.any();
  const RunOutcome run = execute_run(scenario, request.cfg, twin, trials, drawn ? request.kept_messages : 0);
  const SimResult& result = run.result;
  for (const auto& warning : result.plan->warnings) std::cerr << "collsim: warning: " << warning << "\n";
  if (drawn) {
    // The trace describes the run completely: --cfg options join the scenario's own.
    Scenario traced = scenario;
    traced.cfg.insert(traced.cfg.end(), request.cfg.begin(), request.cfg.end());
    OutputBatch batch;  // the trace and the pictures appear together or not at all
    if (!pictures.any()) {
      // The trace alone: written straight to text, its single messages never built as JSON.
      if (!request.trace_path.empty()) write_file_atomically(request.trace_path, trace_text(traced, result, run.summary), "--trace");
    } else {
      // The pictures are drawn from the trace, as `collsim render` draws them from its file;
      // the trace file is the same document's text (trace_text writes the same bytes).
      const nlohmann::json trace = build_trace(traced, result, run.summary);
      if (!request.trace_path.empty()) write_file_atomically(request.trace_path, trace.dump(1) + "\n", "--trace");
      viz::write_pictures(viz::read_trace(trace, "the run's trace"), pictures);
    }
    batch.commit();
  }
  if (!request.quiet) std::cout << format_summary(scenario, result, run.summary) << std::flush;
  if (!result.stall.empty()) {
    std::cerr << "collsim: stalled: " << result.stall << "\n";
    return 1;
  }
  if (!run.verification.verified) {
    std::cerr << "collsim: verification failed: " << run.verification.failure << "\n";
    return 1;
  }
  return 0;
}

namespace {

void check_picture_outputs(const viz::PictureOutputs& pictures) {
  for (const auto& [path, field] : {std::pair{&pictures.svg, "--svg"}, {&pictures.html, "--html"}, {&pictures.perfetto, "--perfetto"}})
    if (!path->empty()) check_output_path(*path, field);
}

// A parallel run's trace (docs/trace-format.md#parallel-runs): its report and its lanes; no
// message timeline to draw.
int render_parallel(const nlohmann::json& trace, const RenderRequest& request) {
  check_picture_outputs({request.svg_path, request.html_path, request.perfetto_path});
  // both built before either is written: a malformed trace leaves no file
  std::string html, perfetto, svg;
  if (!request.html_path.empty()) html = viz::parallel_html_report(trace, request.trace_path);
  if (!request.svg_path.empty()) svg = viz::parallel_lanes_svg(trace, request.trace_path);
  if (!request.perfetto_path.empty()) {
    try {
      perfetto = step_perfetto(intervals_from_trace(trace.at("parallel"), request.trace_path),
                               trace.at("scenario").at("name").get<std::string>(),
                               trace.at("parallel").at("step_time").get<double>()).dump(1) + "\n";
    } catch (const nlohmann::json::exception& error) {
      throw InputError(fmt::format("{}: not a parallel trace collsim reads: {}", request.trace_path, error.what()));
    }
  }
  OutputBatch batch;
  if (!html.empty()) write_file_atomically(request.html_path, html, "--html");
  if (!svg.empty()) write_file_atomically(request.svg_path, svg, "--svg");
  if (!perfetto.empty()) write_file_atomically(request.perfetto_path, perfetto, "--perfetto");
  batch.commit();
  return 0;
}

}  // namespace

int command_render(const RenderRequest& request) {
  const viz::PictureOutputs pictures{request.svg_path, request.html_path, request.perfetto_path};
  if (!pictures.any()) throw InputError("render: give at least one of --svg OUT.svg, --html OUT.html, --perfetto OUT.json");
  const nlohmann::json document = parse_json(read_input_file(request.trace_path, "trace file"), request.trace_path);
  if (document.is_object() && document.contains("parallel")) return render_parallel(document, request);
  const viz::TraceView trace = viz::read_trace(document, request.trace_path);
  check_picture_outputs(pictures);
  OutputBatch batch;
  viz::write_pictures(trace, pictures);
  batch.commit();
  return 0;
}

int command_compare(const CompareRequest& request) {
  CompareOptions options;
  for (const auto& tolerance : request.tolerances) parse_tolerance(tolerance, options);
  const auto baseline = load_metric_sets(request.baseline, "BASELINE");
  const auto current = load_metric_sets(request.current, "CURRENT");
  if (baseline.empty() && current.empty())
    throw InputError(fmt::format("compare: nothing to compare: neither '{}' nor '{}' holds a trace, baseline or "
                                 "results table (.json or .csv)", request.baseline, request.current));
  const auto rows = compare_metric_sets(baseline, current, options);
  std::cout << format_comparison(rows, request.format);
  return comparison_exit_status(rows, request.strict);
}

int command_baseline_update(const std::string& scenarios_dir, const std::string& out_dir, bool quiet) {
  const int written = update_baselines(scenarios_dir, out_dir, quiet);
  if (!quiet) std::cout << fmt::format("{} baselines written to {}\n", written, out_dir);
  return 0;
}

int command_validate(const RunRequest& request, bool print_plan) {
  const Scenario scenario = load_scenario(request);
  PlanOptions options;
  options.cfg = request.cfg;
  // The plan a run would make: auto's trials (--auto simulate) and the topology bound too.
  options.topology_bound = print_plan;
  if (print_plan) options.auto_simulated = auto_trials(scenario, request.cfg);
  if (print_plan) options.auto_nccl = pick_nccl_for_auto(scenario, request.cfg, options.auto_simulated);
  SimGridGuard guard;
  const RunPlan plan = plan_run(scenario, options, guard);
  if (print_plan) {
    // a parallel run plans its own collectives or step, not the plain run's one collective
    std::cout << (scenario.parallelism.given ? parallel_plan_json(plan) : plan_json(plan)).dump(2) << "\n";
    return 0;
  }
  std::string extras;
  if (!scenario.faults.empty()) extras += fmt::format(", {} fault(s)", scenario.faults.size());
  if (scenario.parallelism.given) {
    // what a parallel run decides before the engine runs: its step, or its communicators' algorithms
    const ParallelismSpec& p = scenario.parallelism;
    if (p.step.given) plan_step(plan);
    else plan_communicators(plan);
    std::cout << fmt::format("ok: {}: parallelism tensor {} x pipeline {} x data {} (expert {}), {}, {} workers on {} ({} "
                             "network{})\n", scenario.name, p.tensor, p.pipeline, p.data, p.expert,
                             p.step.given ? "a training step of " + p.step.model.name
                                          : fmt::format("{} collective(s) at once", p.collectives.size()),
                             plan.workers, plan.platform.source, network_model_name(scenario.network), extras);
    return 0;
  }
  if (scenario.training.rounds > 1) extras += fmt::format(", {} rounds", scenario.training.rounds);
  if (scenario.training.has_model()) extras += ", model " + scenario.training.model;
  if (scenario.recovery.policy == RecoveryPolicy::rebuild) extras += ", recovery rebuild";
  std::cout << fmt::format("ok: {}: {} / {}, {} workers on {} ({} network{})\n", scenario.name,
                           collective_name(scenario.collective.kind), scenario.collective.algorithm, plan.workers,
                           plan.platform.source, network_model_name(scenario.network), extras);
  return 0;
}

namespace {

// The student slot's line: what it holds now (the template until a student's file is built in).
std::string student_slot_summary() {
  if (*student_origin == '\0')
    return "yours (lab 7): holds the template's chain (src/algorithms/student.cpp) until you build collsim with "
           "-DCOLLSIM_STUDENT_FILE=YOUR_COPY; never chosen by auto";
  return fmt::format("yours (lab 7), built from {}; never chosen by auto", student_origin);
}

}  // namespace

int command_list(const std::string& what) {
  const fs::path root(COLLSIM_SOURCE_DIR);
  const std::vector<std::string> kinds{"algorithms", "topologies", "scenarios", "sweeps", "metrics"};
  if (!what.empty() && std::find(kinds.begin(), kinds.end(), what) == kinds.end())
    throw InputError(fmt::format("list: unknown list '{}'{}; allowed: {}", what, did_you_mean(what, kinds), join(kinds)));

  if (what == "metrics") {
    std::cout << fmt::format("{:<20} {:<8} {:<14} {}\n", "METRIC", "UNIT", "BETTER", "MEANING");
    for (const Metric& metric : metric_table())
      std::cout << fmt::format("{:<20} {:<8} {:<14} {}{}\n", metric.name, metric_unit_name(metric.unit),
                               better_name(metric.better), metric.description,
                               metric.needs_baseline ? " (only with --baseline)" : "");
  }
  if (what.empty() || what == "algorithms") {
    size_t kind_width = 0, name_width = 0;
    for (const auto& a : all_algorithms()) {
      kind_width = std::max(kind_width, collective_name(a.collective).size());
      name_width = std::max(name_width, a.name.size());
    }
    for (const auto& a : all_algorithms()) {
      const std::string uses = uses_names(a.uses);
      std::cout << fmt::format("{:<{}}  {:<{}}  {}{}\n", collective_name(a.collective), kind_width, a.name, name_width,
                               a.builtin ? a.summary : student_slot_summary(), uses.empty() ? "" : " [uses " + uses + "]");
    }
  }
  if (what.empty() || what == "topologies") {
    const auto files = files_in(root / "topologies", ".xml");
    size_t width = 28;
    for (const auto& file : files) width = std::max(width, fs::relative(file, root).string().size());
    for (const auto& family : generator_families())
      for (const auto& example : family.examples) width = std::max(width, example.size());
    std::cout << fmt::format("{:<{}} {:>6} {:>6}  {}\n", "TOPOLOGY", width, "HOSTS", "LINKS", "DESCRIPTION");
    for (const auto& file : files)
      std::cout << fmt::format("{:<{}} {}  {}\n", fs::relative(file, root).string(), width,
                               count_hosts_and_links(file.string(), "  (broken file)"), describe_file(file));
    // Each generator's examples, counted by generating them.
    std::cout << fmt::format("\n{:<{}} {:>6} {:>6}  {}\n", "GENERATOR (EXAMPLE)", width, "HOSTS", "LINKS",
                             "SYNTAX: DESCRIPTION");
    for (const auto& family : generator_families())
      for (size_t i = 0; i < family.examples.size(); ++i)
        std::cout << fmt::format("{:<{}} {}  {}\n", family.examples[i], width,
                                 count_hosts_and_links(family.examples[i], "  (failed)"),
                                 i == 0 ? family.syntax + ": " + family.summary : family.syntax);
  }
  if (what.empty() || what == "scenarios" || what == "sweeps") {
    std::vector<fs::path> scenarios, sweeps;
    for (const auto& file : files_in(root / "scenarios", ".json"))
      (is_sweep_file(file.string()) ? sweeps : scenarios).push_back(file);
    auto list_described = [&](const std::vector<fs::path>& files) {
      size_t width = 0;
      for (const auto& file : files) width = std::max(width, fs::relative(file, root).string().size());
      for (const auto& file : files)
        std::cout << fmt::format("{:<{}}  {}\n", fs::relative(file, root).string(), width, describe_file(file));
    };
    if (what != "sweeps") list_described(scenarios);
    if (what != "scenarios") {
      std::cout << (what.empty() ? "\nSWEEPS\n" : "SWEEPS\n");
      list_described(sweeps);
    }
  }
  return 0;
}

}  // namespace collsim
