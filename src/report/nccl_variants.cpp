#include "report/nccl_variants.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <vector>

#include "model/contention.hpp"
#include "nccl/constants.hpp"
#include "plan/planner.hpp"
#include "platform/generator_spec.hpp"
#include "util/child_process.hpp"
#include "util/units.hpp"

namespace collsim {

namespace {

struct Variant {
  nccl::Algo algo = nccl::Algo::ring;
  nccl::Proto proto = nccl::Proto::simple;
  double time = std::numeric_limits<double>::infinity();
  int channels = 0;
  std::string why_not;  // why it cannot run here (NCCL's rules, or collsim's)
};

// The variant's plan made in this (child) process: "SECONDS CHANNELS".
std::string price(Scenario scenario, nccl::Algo algo, nccl::Proto proto) {
  scenario.collective.algorithm = nccl::registry_name(algo);
  scenario.nccl.proto = proto;
  SimGridGuard guard;
  PlanOptions options;
  options.model_only = true;  // priced for `collsim model`: nothing runs, the model's own limits
  const RunPlan plan = plan_run(scenario, options, guard);
  const double time = estimate_schedule(plan.choice.algorithm->schedule(plan.model), plan.model).time;
  return fmt::format("{:.17g} {}", time, plan.choice.parameters["nccl"]["channels"].get<int>());
}

// "collective.algorithm: NCCL's ... " without its field: the reason alone.
std::string reason_of(const std::string& error) {
  const auto colon = error.find(": ");
  return colon == std::string::npos ? error : error.substr(colon + 2);
}

}  // namespace

std::string rank_nccl_variants(const Scenario& scenario) {
  if (scenario.collective.kind != Collective::allreduce) return "";
  // a generated platform of another family than rail (and its GPU presets) has no GPUs: no
  // child needs to build it to find that out (12 s of CPU for a fat tree at p = 131,072)
  const auto generator = parse_generator(scenario.topology, "topology");
  if (generator && !std::holds_alternative<RailSpec>(*generator)) return "";
  std::vector<Variant> variants;
  for (const nccl::Algo algo : {nccl::Algo::ring, nccl::Algo::tree, nccl::Algo::nvls, nccl::Algo::nvls_tree})
    for (const nccl::Proto proto : nccl::all_protos()) {
      const bool in_switch = algo == nccl::Algo::nvls || algo == nccl::Algo::nvls_tree;
      if (in_switch && proto != nccl::Proto::simple) continue;  // NCCL runs them with Simple only
      Variant v;
      v.algo = algo;
      v.proto = proto;
      const ChildOutcome outcome = run_in_child([&] { return price(scenario, algo, proto); });
      if (outcome.exit_code == 0) std::sscanf(outcome.output.c_str(), "%lf %d", &v.time, &v.channels);
      else v.why_not = reason_of(outcome.output);
      // no GPUs: no NCCL at all
      if (v.why_not.find("run on GPUs") != std::string::npos) return "";
      variants.push_back(v);
    }
  std::stable_sort(variants.begin(), variants.end(), [](const Variant& a, const Variant& b) { return a.time < b.time; });
  std::string out = "  NCCL's algorithms (collsim's runs of them, with the channels NCCL's tuner gives each), ranked by the model:\n";
  for (size_t i = 0; i < variants.size(); ++i) {
    const Variant& v = variants[i];
    const std::string name = fmt::format("{}/{}", nccl::algo_name(v.algo), nccl::proto_name(v.proto));
    if (v.why_not.empty())
      out += fmt::format("  {:>2} {:<16} {:<15} {:>2} ch  {}\n", i + 1, name, nccl::registry_name(v.algo), v.channels,
                         format_time(v.time));
    else
      out += fmt::format("  {:>2} {:<16} {:<15} not here: {}\n", i + 1, name, nccl::registry_name(v.algo), v.why_not);
  }
  return out;
}

}  // namespace collsim
