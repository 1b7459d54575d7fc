#include "llm/layouts.hpp"

#include <fmt/format.h>

namespace collsim::llm {
namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int k = 1; k <= n; ++k)
    if (n % k == 0) out.push_back(k);
  return out;
}

// The least recomputation that fits (or the one the rules fix), with its memory.
LayoutCandidate fit(const TransformerModel& model, Layout layout, const LayoutRules& rules) {
  std::vector<Recompute> tries{Recompute::none, Recompute::selective, Recompute::full};
  if (rules.recompute) tries = {*rules.recompute};
  LayoutCandidate candidate;
  for (const Recompute recompute : tries) {
    layout.recompute = recompute;
    candidate.layout = layout;
    candidate.memory = memory_per_gpu(model, layout);
    candidate.fits = candidate.memory.total() <= rules.memory_bytes;
    if (candidate.fits) break;
  }
  return candidate;
}

}  // namespace

bool interleaving_allowed(const TransformerModel& model, const Layout& layout, int virtual_stages) {
  if (virtual_stages == 1) return true;
  return virtual_stages > 1 && layout.pipeline > 1 && model.layers % (layout.pipeline * virtual_stages) == 0 &&
         micro_batches(model, layout) % layout.pipeline == 0;
}

std::vector<LayoutCandidate> enumerate_layouts(const TransformerModel& model, const LayoutRules& rules) {
  std::vector<LayoutCandidate> out;
  for (const int tensor : divisors(rules.gpus_per_node)) {
    // Megatron splits the heads and the key/value groups over the tensor group (its arguments
    // check num_query_groups % tensor_model_parallel_size == 0).
    if (rules.gpus % tensor != 0 || model.heads % tensor != 0 || model.kv_heads % tensor != 0) continue;
    for (const int pipeline : divisors(rules.gpus / tensor)) {
      if (pipeline > model.layers) continue;
      const int data = rules.gpus / (tensor * pipeline);
      if (model.global_batch % (data * model.micro_batch) != 0) continue;
      for (const int expert : divisors(data)) {
        if (model.experts % expert != 0 || (model.experts == 1 && expert > 1)) continue;
        Layout layout;
        layout.tensor = tensor, layout.pipeline = pipeline, layout.data = data, layout.expert = expert;
        layout.sequence_parallel = rules.sequence_parallel && tensor > 1;
        layout.zero_stage = rules.zero_stage;
        const int most = rules.max_virtual_stages > 0 ? rules.max_virtual_stages : model.layers;
        for (int v = 1; v <= most; ++v) {
          if (!interleaving_allowed(model, layout, v)) continue;
          layout.virtual_stages = v;
          out.push_back(fit(model, layout, rules));
        }
      }
    }
  }
  return out;
}

std::string layout_name(const Layout& layout) {
  std::string name = fmt::format("TP{} PP{} DP{}", layout.tensor, layout.pipeline, layout.data);
  if (layout.virtual_stages > 1) name += fmt::format(" VP{}", layout.virtual_stages);
  if (layout.expert > 1) name += fmt::format(" EP{}", layout.expert);
  return name;
}

}  // namespace collsim::llm
