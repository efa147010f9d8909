#include "tools/loop/loop_report.h"

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace phaseloop::loop {
namespace {

// Two iterations: one promoted after two steps, one whose gate refused.
v1::LoopRun TwoIterations(std::map<std::string, v1::CanaryRun>* canaries) {
  v1::LoopRun run;
  run.set_loop_id("demo");
  run.set_phase("done");
  run.set_iterations_planned(2);
  run.set_starts(1);
  v1::LoopIteration* first = run.add_iterations();
  first->set_index(0);
  first->set_candidate_version("aaaaaaaaaaaaaaaaaaaa");
  first->set_gate_passed(true);
  first->set_train_transitions(40);
  first->set_staged(true);
  first->set_staging_verdict("measured");
  first->set_staging_speedup(1.02);
  first->set_staging_low(1.005);
  first->set_staging_high(1.04);
  first->set_canary_id("demo-1");
  first->set_canary_phase("promoted");
  first->set_has_final_reward(true);
  first->set_final_reward(0.031);
  first->set_has_budget_remaining(true);
  first->set_budget_remaining(0.97);
  first->set_stable_after("aaaaaaaaaaaaaaaaaaaa");
  first->mutable_candidate_build()->set_modules(13);
  first->mutable_candidate_build()->set_modules_changed(12);
  first->mutable_candidate_build()->set_alloc_size(90000);
  first->mutable_candidate_build()->set_compile_time_us(4'000'000);
  first->mutable_candidate_build()->set_policy_time_us(20'000);
  first->mutable_stable_build()->set_modules(13);
  first->mutable_stable_build()->set_alloc_size(91000);
  v1::LoopStage* trained = first->add_stages();
  trained->set_name("train");
  trained->set_status("done");
  v1::LoopStage* stage = first->add_stages();
  stage->set_name("canary");
  stage->set_status("done");
  stage->set_attempts(2);
  stage->set_summary("promoted <fast>");
  v1::CanaryRun canary;
  canary.set_canary_id("demo-1");
  canary.set_phase("promoted");
  canary.set_candidate_version("aaaaaaaaaaaaaaaaaaaa");
  for (double weight : {0.05, 0.10}) {
    auto* step = canary.add_steps();
    step->set_canary_weight(weight);
    step->set_outcome("Pass");
    auto* metric = step->add_metrics();
    metric->set_name("latency_ms");
    metric->set_baseline_count(400);
    metric->set_canary_count(400);
    metric->set_percentile(95);
    metric->set_baseline_at_percentile(2.0);
    metric->set_canary_at_percentile(1.9);
  }
  (*canaries)["demo-1"] = canary;
  v1::LoopIteration* second = run.add_iterations();
  second->set_index(1);
  second->set_train_transitions(44);
  v1::LoopStage* train = second->add_stages();
  train->set_name("train");
  train->set_status("done");
  train->set_summary("the gate refused the new policy");
  v1::LoopStage* skipped = second->add_stages();
  skipped->set_name("canary");
  skipped->set_status("skipped");
  return run;
}

TEST(LoopReportTest, HtmlHasEveryChartAndEscapesText) {
  std::map<std::string, v1::CanaryRun> canaries;
  const v1::LoopRun run = TwoIterations(&canaries);
  const std::string html = LoopReportHtml(run, canaries);
  // rewards, budget, staging, training, build size and cost, one canary's
  // steps
  size_t charts = 0;
  for (size_t at = html.find("class=\"pl-chart\""); at != std::string::npos;
       at = html.find("class=\"pl-chart\"", at + 1)) {
    ++charts;
  }
  EXPECT_EQ(charts, 7u);
  EXPECT_NE(html.find("promoted &lt;fast&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<fast>"), std::string::npos);
  EXPECT_NE(html.find("the gate refused the new policy"), std::string::npos);
  EXPECT_NE(html.find("<td>refused</td>"), std::string::npos);
  EXPECT_NE(html.find("44 transitions"), std::string::npos);
  EXPECT_NE(html.find("12 of 13 units off -O3, 90000 B"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html, LoopReportHtml(run, canaries));  // deterministic
}

TEST(LoopReportTest, JsonCarriesTheFigures) {
  std::map<std::string, v1::CanaryRun> canaries;
  const v1::LoopRun run = TwoIterations(&canaries);
  const auto j = nlohmann::json::parse(LoopReportJson(run, canaries));
  ASSERT_EQ(j["iterations"].size(), 2u);
  EXPECT_EQ(j["iterations"][0]["outcome"], "promoted");
  EXPECT_DOUBLE_EQ(j["iterations"][0]["final_reward"].get<double>(), 0.031);
  EXPECT_DOUBLE_EQ(j["iterations"][0]["staging"]["low"].get<double>(), 1.005);
  ASSERT_EQ(j["iterations"][0]["canary_steps"].size(), 2u);
  EXPECT_DOUBLE_EQ(
      j["iterations"][0]["canary_steps"][1]["p95_canary_ms"].get<double>(),
      1.9);
  EXPECT_EQ(j["iterations"][1]["outcome"], "not rolled out");
  // The gate's word: a refusal (no candidate version) is said as one.
  EXPECT_EQ(j["iterations"][0]["gate"], "passed");
  EXPECT_EQ(j["iterations"][1]["gate"], "refused");
  EXPECT_TRUE(j["iterations"][1]["final_reward"].is_null());
  EXPECT_EQ(j["iterations"][0]["stages"][1]["attempts"], 2);
  EXPECT_EQ(j["iterations"][0]["candidate_build"]["alloc_size"], 90000);
  EXPECT_DOUBLE_EQ(
      j["iterations"][0]["candidate_build"]["policy_time_s"].get<double>(),
      0.02);
  EXPECT_TRUE(j["iterations"][1]["candidate_build"].is_null());
}

TEST(LoopReportTest, AMissingCanaryStateIsSaid) {
  std::map<std::string, v1::CanaryRun> canaries;
  const v1::LoopRun run = TwoIterations(&canaries);
  const std::string html = LoopReportHtml(run, {});
  EXPECT_NE(html.find("canary demo-1 has no state"), std::string::npos);
}

}  // namespace
}  // namespace phaseloop::loop
