#include "canary/controller/step_figures.h"

#include "gtest/gtest.h"

namespace phaseloop::canary {
namespace {

TEST(StepFiguresTest, TheJudgedRequestsP95) {
  v1::CanaryStepResult step;
  auto* errors = step.add_metrics();
  errors->set_name("error_rate");
  errors->set_baseline_count(9);
  errors->set_canary_count(9);
  auto* latency = step.add_metrics();
  latency->set_name("latency_ms");
  latency->set_baseline_count(500);
  latency->set_canary_count(480);
  latency->set_baseline_median(1.0);
  latency->set_baseline_at_percentile(2.0);
  latency->set_canary_at_percentile(2.5);
  const StepP95 p95 = StepP95Ms(step);
  EXPECT_TRUE(p95.known);
  EXPECT_EQ(p95.baseline_ms, 2.0);
  EXPECT_EQ(p95.canary_ms, 2.5);
}

TEST(StepFiguresTest, OlderStepsGiveTheMedianOfTheirWindowsP95s) {
  v1::CanaryStepResult step;
  auto* latency = step.add_metrics();
  latency->set_name("p95_latency_ms");
  latency->set_baseline_count(9);
  latency->set_canary_count(9);
  latency->set_baseline_median(3.0);
  latency->set_canary_median(3.3);
  const StepP95 p95 = StepP95Ms(step);
  EXPECT_TRUE(p95.known);
  EXPECT_EQ(p95.canary_ms, 3.3);
}

TEST(StepFiguresTest, NoLatencyJudgedIsUnknown) {
  v1::CanaryStepResult step;
  auto* latency = step.add_metrics();
  latency->set_name("latency_ms");  // no data on a side
  latency->set_baseline_count(0);
  EXPECT_FALSE(StepP95Ms(step).known);
  EXPECT_FALSE(StepP95Ms(v1::CanaryStepResult()).known);
}

}  // namespace
}  // namespace phaseloop::canary
