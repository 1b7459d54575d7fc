#pragma once
// The figures of a simulated training step (docs/parallelism.md#figures): the step time, each
// communicator's time and the time the compute stream waited for it (exposed), the pipeline
// bubble, MFU and tokens per second; and the lines people read.
#include <nlohmann/json.hpp>
#include <string>

#include "parallel/step_executor.hpp"

namespace collsim {

struct StepFigures {
  double step_time = 0;
  int critical_rank = 0;
  RankStepTimes critical;  // where the slowest rank's step went: compute + tensor + expert + pipeline + data exposed
  // each communicator's busy time, the most of any rank
  double tensor_busy = 0, pipeline_busy = 0, expert_busy = 0, data_busy = 0;
  // where a fault hurts: each communicator's most exposed rank (the compute stream waiting on it longest)
  struct Worst {
    double seconds = 0;
    int rank = 0;
  };
  Worst tensor_worst, pipeline_worst, expert_worst, data_worst;
  // the slowest rank's pipeline waits for other stages' compute (critical.pipeline less its
  // messages' transfers, critical.pipeline_messages) over the step
  double bubble_fraction = 0;
  double mfu = 0;              // model FLOPs of the step / (step time x GPUs x peak)
  double tokens_per_second = 0;
};

StepFigures step_figures(const StepResult& result, const StepSpec& spec, int gpus);
std::string format_step_summary(const StepResult& result, const StepFigures& figures, const RunPlan& plan);
nlohmann::json step_figures_json(const StepFigures& figures);

}  // namespace collsim
