#pragma once
// `collsim sweep layouts`: the layouts of a transformer on a GPU cluster (issue 52 item 4),
// those that fit the GPUs' memory ranked by their step time, with what each loses its time
// to. docs/training.md#layout-search.
#include <nlohmann/json.hpp>
#include <string>

namespace collsim {

struct LayoutSearchRequest {
  // a scenario with a parallelism.step ("" for none): its topology, model (with its shape),
  // GPU, efficiency, sequence parallelism, ZeRO stage and scatter/gather take the place of
  // the flags, and --simulate runs it with each layout in place of its own
  std::string scenario;
  nlohmann::json scenario_document;  // read from `scenario` by command_layout_search
  std::string model;           // a transformer preset (llm/transformer.hpp)
  std::string topology;        // a GPU cluster generator: rail:..., dgx-a100:N, dgx-h100:N, dgx-h200:N, gb200-nvl72:R
  double efficiency = 1;       // the fraction of the GPU's peak its FLOPs run at, as the user states it
  int top = 10;                // layouts printed
  int zero_stage = 0;
  bool sequence_parallel = false;
  std::string recompute;       // "none", "selective" or "full"; empty: the least that fits, per layout
  int micro_batch = 0, global_batch = 0, sequence = 0;  // 0: the preset's
  int max_virtual_stages = 0;  // model chunks per stage tried, at most (0: every count Megatron allows)
  std::string out;             // CSV of every layout enumerated ("" for none)
  int simulate = 0;            // the first N layouts by the estimate also run through the simulated step
  int jobs = 0;                // with simulate: simulations at once (0: one per core)
  // with simulate: a layout whose step would send more messages than this (counted before
  // simulating, llm::step_messages) is not simulated; the default runs in minutes here
  long long max_messages = 10000000;
  bool pipeline_scatter_gather = false;  // from the scenario's step
  std::string gpu;                       // from the scenario's step ("": the cluster's)
};

// Prints the ranking; 0, or 1 when no layout fits. Bad input throws InputError.
int command_layout_search(const LayoutSearchRequest& request);

}  // namespace collsim
