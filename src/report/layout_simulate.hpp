#pragma once
// `collsim sweep layouts --simulate N`: the N layouts the alpha-beta estimate ranks first,
// each run through the simulated training step (parallelism.step: every collective on real
// buffers, the communicators sharing the network as SimGrid shares it) in a process of its
// own, and ranked again by their simulated step time. docs/training.md#layout-search.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "llm/layer_costs.hpp"
#include "report/layout_search.hpp"

namespace collsim {

struct EstimatedLayout {
  llm::Layout layout;
  double estimated_step = 0;
  double messages = 0;  // what simulating its step costs (llm::step_messages)
};

// The scenario that runs `layout` as the search priced it: the request's model, its
// overrides, efficiency, sequence parallelism and ZeRO stage, the cluster's GPU.
nlohmann::json layout_scenario(const LayoutSearchRequest& request, const llm::Layout& layout, const std::string& gpu);

// Prints what simulating `layouts` costs, simulates those under `request.max_messages`
// (`request.jobs` at a time) and prints their table; 0, or 1 when none could be simulated.
// Throws InputError when every one is over the limit.
int print_simulated_layouts(const LayoutSearchRequest& request, const std::vector<EstimatedLayout>& layouts,
                            const std::string& gpu);

}  // namespace collsim
