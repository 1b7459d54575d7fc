#include "parallel/step_summary.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "parallel/layout.hpp"
#include "parallel/pipeline_schedule.hpp"
#include "util/units.hpp"

namespace collsim {

StepFigures step_figures(const StepResult& result, const StepSpec& spec, int gpus) {
  StepFigures f;
  f.step_time = result.step_time;
  f.critical_rank = result.critical_rank;
  if (!result.ranks.empty()) f.critical = result.ranks[static_cast<size_t>(result.critical_rank)];
  auto note = [](StepFigures::Worst& worst, double seconds, int rank) {
    if (seconds > worst.seconds) worst = {seconds, rank};
  };
  // when every rank waited 0 s, the first rank still in the step is named, never a dropped one
  const auto kept = std::find_if(result.ranks.begin(), result.ranks.end(), [](const RankStepTimes& r) { return !r.dropped; });
  if (kept != result.ranks.end())
    f.tensor_worst.rank = f.pipeline_worst.rank = f.expert_worst.rank = f.data_worst.rank =
        static_cast<int>(kept - result.ranks.begin());
  for (size_t i = 0; i < result.ranks.size(); ++i) {
    const RankStepTimes& r = result.ranks[i];
    if (r.dropped) continue;  // its replica left the step
    note(f.tensor_worst, r.tensor, static_cast<int>(i));
    note(f.pipeline_worst, r.pipeline, static_cast<int>(i));
    note(f.expert_worst, r.expert, static_cast<int>(i));
    note(f.data_worst, r.data_exposed(), static_cast<int>(i));
    f.tensor_busy = std::max(f.tensor_busy, r.tensor);
    f.pipeline_busy = std::max(f.pipeline_busy, r.pipeline);
    f.expert_busy = std::max(f.expert_busy, r.expert);
    f.data_busy = std::max(f.data_busy, r.data_busy);
  }
  if (f.step_time > 0) {
    f.bubble_fraction = (f.critical.pipeline - f.critical.pipeline_messages) / f.step_time;
    // after a lost replica, only the tokens of the replicas left reach the update; the GPUs
    // are all those the step started with
    f.mfu = result.kept_fraction * result.plan->model_flops / (f.step_time * gpus * spec.peak_flops);
    f.tokens_per_second = result.kept_fraction * result.plan->tokens / f.step_time;
  }
  return f;
}

namespace {

std::string fault_line(const PlannedFault& fault) {
  const std::string from = format_time(fault.spec.at.value_or(0));
  const std::string lasting = fault.spec.duration ? " for " + format_time(*fault.spec.duration) : std::string();
  switch (fault.spec.kind) {
    case FaultKind::slow_host:
      return fmt::format("fault: slow GPU of {} x{:g} from {}{}\n", fault.target, fault.spec.factor, from, lasting);
    case FaultKind::slow_link:
      return fmt::format("fault: {} slowed x{:g} from {}{}\n", fault.target, fault.spec.factor, from, lasting);
    case FaultKind::preempt: return fmt::format("fault: {} preempted at {}\n", fault.target, from);
    case FaultKind::link_down: return fmt::format("fault: {} down at {}{}\n", fault.target, from, lasting);
  }
  return "";
}

std::string recovery_lines(const StepRecovery& r, double kept_fraction, int data) {
  std::string text = fmt::format("recovery epoch {} -> {}: dropped ranks {}: {}\n", r.epoch_before, r.epoch_after,
                                 fmt::join(r.dropped_ranks, ", "), r.stopped ? r.reason : r.rule);
  if (r.stopped) return text;
  text += fmt::format("          {}\n", r.reason);
  text += fmt::format("          fault {}, detected {}, rebuilt {}, resumed {}, step completed {}; {:.4g} of {} replicas' "
                      "tokens reach the update\n",
                      format_time(r.fault_time), format_time(r.detected), format_time(r.rebuilt), format_time(r.resumed),
                      r.completed >= 0 ? format_time(r.completed) : std::string("never"), kept_fraction * data, data);
  return text;
}

}  // namespace

std::string format_step_summary(const StepResult& result, const StepFigures& f, const RunPlan& plan) {
  const ParallelismSpec& p = plan.scenario.parallelism;
  const StepSpec& spec = p.step;
  const StepPlan& step = *result.plan;
  const double t = f.step_time > 0 ? f.step_time : 1;
  auto share = [&](double seconds) { return fmt::format("{:>10} ({:4.1f}%)", format_time(seconds), 100 * seconds / t); };
  std::string text = fmt::format(
      "step: {} on tensor {} x pipeline {} x data {} = {} GPUs (expert {}), Megatron's rank order; {} micro-batches of {} "
      "per replica, {} blocks per stage{}, {}{}; {} at {:.0f}% of its {:.4g} TFLOP/s peak\n",
      spec.model.name, p.tensor, p.pipeline, p.data, p.workers(), p.expert, step.micro_batches, spec.model.micro_batch,
      step.stage_blocks.front(),
      step.chunks > 1 ? fmt::format(" in {} interleaved chunks", step.chunks) : "", spec.sequence_parallel ? "sequence parallel, " : "",
      spec.zero > 0 ? "distributed optimizer (ZeRO-1)" : "gradients allreduced", spec.gpu, 100 * spec.efficiency,
      spec.peak_flops / 1e12);
  text += fmt::format("step time        {}: {:.4g} tokens/s, MFU {:.1f}%\n", format_time(f.step_time), f.tokens_per_second,
                      100 * f.mfu);
  text += fmt::format("slowest rank {} (stage {}): where its step went\n", f.critical_rank,
                      f.critical_rank / (p.tensor * p.data));
  text += fmt::format("  compute        {}\n", share(f.critical.compute));
  text += fmt::format("  tensor         {}  exposed (the stream waits for Megatron's collectives)\n", share(f.critical.tensor));
  if (p.expert > 1) text += fmt::format("  expert         {}  exposed (alltoalls)\n", share(f.critical.expert));
  text += fmt::format("  pipeline       {}  bubble {} ({:.1f}%: waiting for other stages' compute; {}'s alone: "
                      "{:.1f}%) + messages {} (activations and gradients in transfer)\n",
                      share(f.critical.pipeline), format_time(f.critical.pipeline - f.critical.pipeline_messages),
                      100 * f.bubble_fraction, step.chunks > 1 ? "interleaved 1F1B" : "1F1B",
                      100 * one_f_one_b_bubble(p.pipeline, step.micro_batches, step.chunks),
                      format_time(f.critical.pipeline_messages));
  text += fmt::format("  data           {}  exposed after backward (its stream busy {})\n", share(f.critical.data_exposed()),
                      format_time(f.critical.data_busy));
  text += fmt::format("communicators (most busy rank): tensor {}, pipeline {}, expert {}, data {}\n", format_time(f.tensor_busy),
                      format_time(f.pipeline_busy), format_time(f.expert_busy), format_time(f.data_busy));
  auto worst = [&](const char* name, const StepFigures::Worst& w) {
    const LayoutCoordinates at = coordinates_of(p, w.rank);
    return fmt::format("{} {} at rank {} (tensor {}, data {}, stage {})", name, format_time(w.seconds), w.rank, at.tensor,
                       at.data, at.pipeline);
  };
  text += fmt::format("most exposed: {}; {}; {}{}\n", worst("tensor", f.tensor_worst), worst("pipeline", f.pipeline_worst),
                      worst("data", f.data_worst), p.expert > 1 ? "; " + worst("expert", f.expert_worst) : std::string());
  for (const PlannedFault& fault : plan.faults) text += fault_line(fault);
  for (const StepRecovery& r : result.recoveries) text += recovery_lines(r, result.kept_fraction, p.data);
  const Verification& v = result.verification;
  text += v.verified ? fmt::format("verified: {} collectives ({} rank results) and {} pipeline messages, max error {:.3g}\n",
                                   result.collectives, v.checked_ranks, result.pipeline_messages, v.max_error)
                     : fmt::format("verification FAILED: {}\n", v.failure);
  return text;
}

nlohmann::json step_figures_json(const StepFigures& f) {
  auto worst = [](const StepFigures::Worst& w) { return nlohmann::json{{"rank", w.rank}, {"seconds", w.seconds}}; };
  return {{"step_time", f.step_time},
          {"critical_rank", f.critical_rank},
          {"compute", f.critical.compute},
          {"exposed", {{"tensor", f.critical.tensor}, {"expert", f.critical.expert}, {"pipeline", f.critical.pipeline},
                       {"data", f.critical.data_exposed()}}},
          {"busy", {{"tensor", f.tensor_busy}, {"expert", f.expert_busy}, {"pipeline", f.pipeline_busy}, {"data", f.data_busy}}},
          {"most_exposed", {{"tensor", worst(f.tensor_worst)}, {"expert", worst(f.expert_worst)},
                            {"pipeline", worst(f.pipeline_worst)}, {"data", worst(f.data_worst)}}},
          {"pipeline_messages", f.critical.pipeline_messages},
          {"bubble_fraction", f.bubble_fraction},
          {"mfu", f.mfu},
          {"tokens_per_second", f.tokens_per_second}};
}

}  // namespace collsim
