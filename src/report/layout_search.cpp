#include "report/layout_search.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <sstream>
#include <variant>

#include "llm/layouts.hpp"
#include "llm/step_estimate.hpp"
#include "report/layout_simulate.hpp"
#include "scenario/parallelism_step.hpp"
#include "scenario/scenario.hpp"
#include "platform/generator_spec.hpp"
#include "util/atomic_file.hpp"
#include "util/csv.hpp"
#include "util/errors.hpp"
#include "util/units.hpp"

namespace collsim {
namespace {

using namespace llm;

struct Ranked {
  LayoutCandidate candidate;
  StepEstimate estimate;
};

TransformerModel requested_model(const LayoutSearchRequest& request) {
  if (!request.scenario.empty())  // the scenario's model, its shape as the run reads it
    return parse_scenario(request.scenario_document, ".").parallelism.step.model;
  TransformerModel model = transformer_preset(request.model, "--model");
  if (request.micro_batch > 0) model.micro_batch = request.micro_batch;
  if (request.global_batch > 0) model.global_batch = request.global_batch;
  if (request.sequence > 0) model.sequence = request.sequence;
  check_transformer(model, "--model");
  return model;
}

RailSpec requested_cluster(const std::string& topology, const char* field) {
  const auto spec = parse_generator(topology, field);
  const RailSpec* rail = spec ? std::get_if<RailSpec>(&*spec) : nullptr;
  if (!rail)
    throw InputError(fmt::format("{}: '{}' is not a GPU cluster; allowed: rail:N:G[...], dgx-a100:N, "
                                 "dgx-h100:N, dgx-h200:N, gb200-nvl72:R",
                                 field, topology));
  return *rail;
}

// --scenario FILE: the scenario's step and topology in the request's place; the flags they
// replace are refused beside it (sweep.cpp)
LayoutSearchRequest with_scenario(LayoutSearchRequest request) {
  if (request.scenario.empty()) {
    if (request.model.empty() || request.topology.empty())
      throw InputError("--model is required, and --topology (or --scenario FILE with a parallelism.step)");
    return request;
  }
  request.scenario_document = load_scenario_json(request.scenario);
  const Scenario scenario = parse_scenario(request.scenario_document, ".");
  if (!scenario.parallelism.step.given)
    throw InputError(fmt::format("--scenario: {} has no parallelism.step; allowed: a scenario of a training step "
                                 "(docs/parallelism.md#the-llm-step)",
                                 request.scenario));
  if (scenario.topology.empty()) throw InputError("--scenario: the scenario names no topology; allowed: a GPU cluster");
  const StepSpec& step = scenario.parallelism.step;
  request.topology = scenario.topology;
  request.model = step.model.name;
  request.efficiency = step.efficiency;
  request.sequence_parallel = step.sequence_parallel;
  request.zero_stage = step.zero;
  request.pipeline_scatter_gather = step.pipeline_scatter_gather;
  request.gpu = step.gpu;
  return request;
}

Cluster cluster_of(const RailSpec& rail, double efficiency, const std::string& gpu) {
  Cluster cluster;
  cluster.gpus_per_node = rail.gpus;
  cluster.nvlink = {rail.nvlink.bandwidth, rail.nvlink.latency};
  cluster.nic = {rail.nic.bandwidth, rail.nic.latency};
  cluster.gpu = gpu.empty() ? gpu_compute(rail.gpu, "--topology") : gpu_compute(gpu, "parallelism.step.gpu");
  cluster.efficiency = efficiency;
  return cluster;
}

std::string gb(double bytes) { return fmt::format("{:.4g} GB", bytes / 1e9); }

std::string where(const CommunicatorTime& c) { return c.crosses_nodes ? "NICs" : "NVLink"; }

// Why the layout takes its time: compute, then each part that adds to it, largest first.
std::string why(const StepEstimate& e) {
  std::vector<std::pair<double, std::string>> parts{
      {e.tensor.exposed, fmt::format("tensor {} ({})", format_time(e.tensor.exposed), where(e.tensor))},
      {e.pipeline.exposed, fmt::format("pipeline messages {} ({})", format_time(e.pipeline.exposed), where(e.pipeline))},
      {e.bubble_time, fmt::format("bubble {} ({:.1f}% of the pipeline)", format_time(e.bubble_time), 100 * e.bubble_fraction)},
      {e.data.exposed, fmt::format("data {} exposed of {} ({})", format_time(e.data.exposed), format_time(e.data.total), where(e.data))},
      {e.expert.exposed, fmt::format("expert alltoall {} ({})", format_time(e.expert.exposed), where(e.expert))}};
  std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string text = fmt::format("compute {}", format_time(e.compute_time));
  for (const auto& [time, words] : parts)
    if (time > 0) text += ", " + words;
  if (e.data.exposed == 0 && e.data.total > 0)
    text += fmt::format(", data {} hidden behind backward ({})", format_time(e.data.total), where(e.data));
  return text;
}

// The estimate's largest part after compute, with its time: what the layout is bound by.
std::string most_exposed(const StepEstimate& e) {
  const double seconds = e.bound_by == "tensor"     ? e.tensor.exposed
                         : e.bound_by == "pipeline" ? e.pipeline.exposed
                         : e.bound_by == "data"     ? e.data.exposed
                         : e.bound_by == "expert"   ? e.expert.exposed
                                                    : e.bubble_time;
  return seconds > 0 ? fmt::format("{} {}", e.bound_by, format_time(seconds)) : "nothing";
}

std::string csv_of(const std::vector<Ranked>& rows) {
  std::ostringstream out;
  out << "layout,tensor,pipeline,data,expert,virtual_stages,recompute,memory_per_gpu,fits,step_time,compute_time,bubble_fraction,"
         "tensor_exposed,pipeline_exposed,data_exposed,expert_exposed,mfu,tokens_per_second,bound_by\n";
  for (const auto& [c, e] : rows) {
    const Layout& l = c.layout;
    out << quote_csv_cell(layout_name(l)) << ',' << l.tensor << ',' << l.pipeline << ',' << l.data << ',' << l.expert << ','
        << l.virtual_stages << ',' << recompute_name(l.recompute) << ',' << fmt::format("{:.0f}", c.memory.total()) << ',' << (c.fits ? "yes" : "no");
    if (c.fits)
      out << fmt::format(",{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.6g},{:.9g},{}\n", e.step_time, e.compute_time,
                         e.bubble_fraction, e.tensor.exposed, e.pipeline.exposed, e.data.exposed, e.expert.exposed,
                         e.mfu, e.tokens_per_second, e.bound_by);
    else
      out << ",,,,,,,,,,\n";
  }
  return out.str();
}

void print_ranking(const std::vector<Ranked>& ranked, int top) {
  fmt::print("  {:>4}  {:<22} {:<10} {:>10} {:>12} {:>6} {:>11} {:>7}  {}\n", "rank", "layout", "recompute", "memory",
             "step", "MFU", "tokens/s", "bubble", "most exposed");
  for (size_t i = 0; i < ranked.size() && i < static_cast<size_t>(top); ++i) {
    const auto& [c, e] = ranked[i];
    fmt::print("  {:>4}  {:<22} {:<10} {:>10} {:>12} {:>5.1f}% {:>11.0f} {:>6.1f}%  {}\n", i + 1, layout_name(c.layout),
               recompute_name(c.layout.recompute), gb(c.memory.total()), format_time(e.step_time), 100 * e.mfu, e.tokens_per_second,
               100 * e.bubble_fraction, most_exposed(e));
  }
}

// Where the scenario's own layout ranks among those that fit, and what it loses its time to.
void print_scenario_layout(const LayoutSearchRequest& request, const std::vector<Ranked>& ranked) {
  const ParallelismSpec p = parse_scenario(request.scenario_document, ".").parallelism;
  const auto own = std::find_if(ranked.begin(), ranked.end(), [&](const Ranked& r) {
    const Layout& l = r.candidate.layout;
    return l.tensor == p.tensor && l.pipeline == p.pipeline && l.data == p.data && l.expert == p.expert &&
           l.virtual_stages == p.step.virtual_stages;
  });
  const std::string name = fmt::format("TP{} PP{} DP{}", p.tensor, p.pipeline, p.data);
  if (own == ranked.end() || !own->candidate.fits) {
    fmt::print("  the scenario's layout: {}: {}\n", name,
               own == ranked.end() ? "not one of the layouts searched" : "does not fit in memory");
    return;
  }
  fmt::print("  the scenario's layout: {}, rank {} by the estimate, {}: {}\n", layout_name(own->candidate.layout),
             own - ranked.begin() + 1, format_time(own->estimate.step_time), why(own->estimate));
}

}  // namespace

int command_layout_search(const LayoutSearchRequest& flags) {
  const LayoutSearchRequest request = with_scenario(flags);
  if (!(request.efficiency > 0 && request.efficiency <= 1))
    throw InputError(fmt::format("--efficiency: {} is not a fraction of the peak; allowed: above 0, at most 1", request.efficiency));
  if (request.zero_stage < 0 || request.zero_stage > 3)
    throw InputError(fmt::format("--zero: {} is not a ZeRO stage; allowed: 0, 1, 2, 3", request.zero_stage));
  if (request.out.size()) check_output_path(request.out, "--out");
  if (request.simulate > 0 && request.zero_stage > 1)
    throw InputError(fmt::format("--simulate: the simulated step runs ZeRO 0 or 1 (parallelism.step.zero); --zero {} is "
                                 "priced by the estimate only: leave one out",
                                 request.zero_stage));
  if (request.simulate == 0 && request.jobs > 0) throw InputError("--jobs: runs the layouts of --simulate at once; give --simulate too");
  if (request.simulate == 0 && request.max_messages != LayoutSearchRequest{}.max_messages)
    throw InputError("--max-messages: limits the layouts of --simulate; give --simulate too");
  const TransformerModel model = requested_model(request);
  const RailSpec rail = requested_cluster(request.topology, request.scenario.empty() ? "--topology" : "topology");
  const Cluster cluster = cluster_of(rail, request.efficiency, request.gpu);
  LayoutRules rules;
  rules.gpus = rail.nodes * rail.gpus;
  rules.gpus_per_node = rail.gpus;
  rules.memory_bytes = cluster.gpu.memory_bytes;
  rules.zero_stage = request.zero_stage;
  rules.sequence_parallel = request.sequence_parallel;
  if (!request.recompute.empty()) rules.recompute = parse_recompute(request.recompute, "--recompute");
  rules.max_virtual_stages = request.max_virtual_stages;

  auto candidates = enumerate_layouts(model, rules);
  for (LayoutCandidate& c : candidates) c.layout.pipeline_scatter_gather = request.pipeline_scatter_gather;
  if (candidates.empty())
    throw InputError(fmt::format("--model: no layout of {} GPUs suits {}; allowed: tensor dividing {} (a node), the {} "
                                 "heads and the {} key/value heads, at most {} pipeline stages, data dividing the global "
                                 "batch {} in micro-batches of {}",
                                 rules.gpus, model.name, rail.gpus, model.heads, model.kv_heads, model.layers, model.global_batch,
                                 model.micro_batch));
  std::vector<Ranked> ranked;
  for (const auto& candidate : candidates)
    ranked.push_back({candidate, candidate.fits ? estimate_step(model, candidate.layout, cluster) : StepEstimate{}});
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    if (a.candidate.fits != b.candidate.fits) return a.candidate.fits;
    return a.estimate.step_time < b.estimate.step_time;
  });
  const auto fitting = std::count_if(ranked.begin(), ranked.end(), [](const Ranked& r) { return r.candidate.fits; });
  if (!request.scenario.empty())
    fmt::print("from {}: its model, shape, GPU, efficiency, sequence parallelism and ZeRO stage; each layout in place of its "
               "own\n",
               request.scenario);
  fmt::print("layouts of {} on {}: {} {} GPUs of {}, {} per node; compute at {:g}% of {:g} TFLOP/s; ZeRO {}; priced by "
             "the alpha-beta model\n",
             model.name, request.topology, rules.gpus, cluster.gpu.gpu, gb(cluster.gpu.memory_bytes), rail.gpus,
             100 * request.efficiency, cluster.gpu.peak_bf16_flops / 1e12, request.zero_stage);
  fmt::print("  {} layouts: {} fit in memory, {} do not\n", ranked.size(), fitting, ranked.size() - fitting);
  if (!request.out.empty()) write_file_atomically(request.out, csv_of(ranked), "--out");
  if (fitting == 0) {
    fmt::print(stderr, "collsim: error: no layout of {} GPUs fits {} in {} per GPU\n", rules.gpus, model.name,
               gb(cluster.gpu.memory_bytes));
    return 1;
  }
  print_ranking(ranked, request.top);
  const auto& best = ranked.front();
  fmt::print("  fastest: {}, recompute {}: {}\n", layout_name(best.candidate.layout),
             recompute_name(best.candidate.layout.recompute), why(best.estimate));
  if (!request.scenario.empty()) print_scenario_layout(request, ranked);
  if (request.simulate == 0) return 0;
  std::vector<EstimatedLayout> first;
  for (size_t i = 0; i < static_cast<size_t>(fitting) && first.size() < static_cast<size_t>(request.simulate); ++i)
    first.push_back({ranked[i].candidate.layout, ranked[i].estimate.step_time,
                     step_messages(model, ranked[i].candidate.layout, StepSpec{}.bucket_parameters)});
  return print_simulated_layouts(request, first, request.gpu.empty() ? rail.gpu : request.gpu);
}

}  // namespace collsim
