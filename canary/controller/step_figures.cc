#include "canary/controller/step_figures.h"

namespace phaseloop::canary {

StepP95 StepP95Ms(const v1::CanaryStepResult& step) {
  StepP95 out;
  for (const auto& metric : step.metrics()) {
    if (metric.baseline_count() == 0 || metric.canary_count() == 0) continue;
    if (metric.name() == "latency_ms") {
      return {true, metric.baseline_at_percentile(),
              metric.canary_at_percentile()};
    }
    if (metric.name() == "p95_latency_ms") {
      out = {true, metric.baseline_median(), metric.canary_median()};
    }
  }
  return out;
}

double MeasuredRelativeReward(const v1::CanaryRun& run) {
  double sum = 0, weight = 0;
  for (const auto& step : run.steps()) {
    if (step.canary_windows() <= 0 || step.baseline_windows() <= 0) continue;
    sum += step.relative_reward() * step.canary_windows();
    weight += step.canary_windows();
  }
  return weight > 0 ? sum / weight : 0;
}

}  // namespace phaseloop::canary
