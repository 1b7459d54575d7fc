#include "report/layout_simulate.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <thread>

#include "llm/layouts.hpp"
#include "parallel/executor.hpp"
#include "scenario/scenario.hpp"
#include "util/child_process.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace collsim {
namespace {

struct Simulated {
  EstimatedLayout layout;
  bool ran = false;
  std::string error;     // why it did not run (a limit, a stall, a failed check)
  nlohmann::json step;   // step_figures_json of the run
  double wall = 0;       // seconds the simulation took
};

// The simulated step's run, in a child: its figures, or an exception (a refusal, a stall, a
// wrong result) whose message becomes the row's.
std::string simulate_one(const nlohmann::json& document) {
  const Scenario scenario = parse_scenario(document, ".");
  PlanOptions options;
  options.kept_messages = 0;
  const ParallelOutcome outcome = run_parallel(scenario, options);
  if (!outcome.stall.empty()) throw std::runtime_error("stalled: " + outcome.stall);
  if (!outcome.verification.verified) throw std::runtime_error("verification failed: " + outcome.verification.failure);
  return step_figures_json(outcome.figures).dump();
}

// The critical rank's largest part after compute, in the estimate's words.
std::string most_exposed(const nlohmann::json& step) {
  std::string name = "compute";
  double most = 0;
  for (const auto& [part, seconds] : step["exposed"].items())
    if (seconds.get<double>() > most) {
      most = seconds.get<double>();
      name = part;
    }
  return name;
}

void print_table(const std::vector<Simulated>& rows) {
  fmt::print("  {:>4}  {:<22} {:>12} {:>12} {:>7} {:>6} {:>11} {:>7}  {:<13} {}\n", "rank", "layout", "estimate", "simulated",
             "sim/est", "MFU", "tokens/s", "bubble", "most exposed", "wall");
  int rank = 0;
  for (const Simulated& row : rows) {
    const std::string name = llm::layout_name(row.layout.layout);
    if (!row.ran) {
      fmt::print("  {:>4}  {:<22} {:>12} not simulated: {}\n", "-", name, format_time(row.layout.estimated_step), row.error);
      continue;
    }
    const double step = row.step["step_time"].get<double>();
    fmt::print("  {:>4}  {:<22} {:>12} {:>12} {:>7.4f} {:>5.1f}% {:>11.0f} {:>6.1f}%  {:<13} {:.1f} s\n", ++rank, name,
               format_time(row.layout.estimated_step), format_time(step), step / row.layout.estimated_step,
               100 * row.step["mfu"].get<double>(), row.step["tokens_per_second"].get<double>(),
               100 * row.step["bubble_fraction"].get<double>(), most_exposed(row.step), row.wall);
  }
}

// A layout whose step sends more messages than the limit: one line, the limit and how to raise it.
std::string over_the_limit(const EstimatedLayout& layout, long long limit) {
  return fmt::format("{}'s step would send about {:.3g} messages (counted as rings before simulating), above the limit of "
                     "{}; raise it with --max-messages N, or make the step smaller with --global-batch",
                     llm::layout_name(layout.layout), layout.messages, limit);
}

// What the simulations will cost, before they start: the work is the messages.
void print_cost(const std::vector<EstimatedLayout>& layouts, long long limit) {
  std::vector<std::string> each;
  for (const EstimatedLayout& layout : layouts)
    each.push_back(fmt::format("{} {:.3g}{}", llm::layout_name(layout.layout), layout.messages,
                               layout.messages > static_cast<double>(limit) ? " (over)" : ""));
  fmt::print("cost before simulating, in messages counted as rings (--max-messages {}): {}\n", limit, fmt::join(each, ", "));
}

}  // namespace

nlohmann::json layout_scenario(const LayoutSearchRequest& request, const llm::Layout& layout, const std::string& gpu) {
  if (!request.scenario_document.is_null()) {  // the user's scenario, with this layout in place of its own
    nlohmann::json document = request.scenario_document;
    nlohmann::json& parallelism = document["parallelism"];
    parallelism["tensor"] = layout.tensor;
    parallelism["pipeline"] = layout.pipeline;
    parallelism["data"] = layout.data;
    parallelism["expert"] = layout.expert;
    parallelism["step"]["recompute"] = std::string(llm::recompute_name(layout.recompute));
    parallelism["step"]["virtual_stages"] = layout.virtual_stages;
    document.erase("workers");    // the layout's GPUs: every GPU of the cluster
    document.erase("placement");  // Megatron's order on them
    document["name"] = llm::layout_name(layout);
    return document;
  }
  nlohmann::json step{{"model", request.model},
                      {"gpu", gpu},
                      {"efficiency", request.efficiency},
                      {"sequence_parallel", request.sequence_parallel},
                      {"recompute", std::string(llm::recompute_name(layout.recompute))},
                      {"zero", request.zero_stage}};
  if (request.micro_batch > 0) step["micro_batch"] = request.micro_batch;
  if (request.global_batch > 0) step["global_batch"] = request.global_batch;
  if (request.sequence > 0) step["sequence"] = request.sequence;
  if (layout.virtual_stages > 1) step["virtual_stages"] = layout.virtual_stages;
  nlohmann::json parallelism{{"tensor", layout.tensor}, {"pipeline", layout.pipeline}, {"data", layout.data}, {"step", step}};
  if (layout.expert > 1) parallelism["expert"] = layout.expert;
  return {{"name", llm::layout_name(layout)}, {"topology", request.topology}, {"parallelism", parallelism}};
}

int print_simulated_layouts(const LayoutSearchRequest& request, const std::vector<EstimatedLayout>& layouts,
                            const std::string& gpu) {
  std::vector<Simulated> rows(layouts.size());
  std::vector<nlohmann::json> documents;
  std::vector<size_t> within;  // the layouts under the limit, simulated
  for (size_t i = 0; i < layouts.size(); ++i) {
    rows[i].layout = layouts[i];
    documents.push_back(layout_scenario(request, layouts[i].layout, gpu));
    if (layouts[i].messages <= static_cast<double>(request.max_messages)) within.push_back(i);
    else rows[i].error = over_the_limit(layouts[i], request.max_messages);
  }
  print_cost(layouts, request.max_messages);
  if (within.empty())
    throw InputError(fmt::format("--max-messages: {}", over_the_limit(layouts.front(), request.max_messages)));
  const int jobs = request.jobs > 0 ? request.jobs : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  run_children(
      within.size(), jobs, [&](size_t k) { return simulate_one(documents[within[k]]); },
      [&](size_t k, const ChildOutcome& outcome, double seconds) {
        const size_t i = within[k];
        rows[i].wall = seconds;
        rows[i].ran = outcome.exit_code == 0;
        if (rows[i].ran) rows[i].step = nlohmann::json::parse(outcome.output);
        else rows[i].error = outcome.output.empty() ? fmt::format("exit status {}", outcome.exit_code) : outcome.output;
      },
      [] { return false; });
  std::stable_sort(rows.begin(), rows.end(), [](const Simulated& a, const Simulated& b) {
    if (a.ran != b.ran) return a.ran;
    return a.ran && a.step["step_time"].get<double>() < b.step["step_time"].get<double>();
  });
  fmt::print("simulated (parallelism.step, every collective on real buffers, each layout in a process of its own): the {} "
             "first by the estimate\n",
             layouts.size());
  print_table(rows);
  if (!rows.front().ran) {
    fmt::print(stderr, "collsim: error: --simulate: none of the {} layouts could be simulated: {}\n", layouts.size(),
               rows.front().error);
    return 1;
  }
  const Simulated& best = rows.front();
  const nlohmann::json& exposed = best.step["exposed"];
  fmt::print("  fastest simulated: {}: compute {}, exposed tensor {}, expert {}, pipeline {}, data {}\n",
             llm::layout_name(best.layout.layout), format_time(best.step["compute"].get<double>()),
             format_time(exposed["tensor"].get<double>()), format_time(exposed["expert"].get<double>()),
             format_time(exposed["pipeline"].get<double>()), format_time(exposed["data"].get<double>()));
  return 0;
}

}  // namespace collsim
