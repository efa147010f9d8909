#include "canary/controller/canary_report.h"

#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::canary {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

v1::CanaryRun RolledBack() {
  v1::CanaryRun run;
  run.set_canary_id("demo-1");
  run.set_service("demo");
  run.set_candidate_version("cand<1>");
  run.set_stable_version("stab");
  run.set_phase("rolled_back");
  run.set_created_ms(1764000000000);
  for (double w : {0.05, 0.25}) {
    auto* plan = run.add_plan();
    plan->set_index(run.plan_size() - 1);
    plan->set_canary_weight(w);
  }
  auto* step = run.add_steps();
  step->set_index(0);
  step->set_canary_weight(0.05);
  step->set_outcome("Fail");
  step->set_baseline_windows(3);
  step->set_canary_windows(3);
  for (double v : {1.0, 1.1, 0.9}) step->add_baseline_p95_ms(v);
  for (double v : {1.5, 1.6, 1.4}) step->add_canary_p95_ms(v);
  auto* metric = step->add_metrics();
  metric->set_name("latency_ms");
  metric->set_outcome("Fail");
  metric->set_reason("p95 1.5x baseline");
  metric->set_baseline_count(400);
  metric->set_canary_count(400);
  metric->set_percentile(95);
  metric->set_baseline_at_percentile(1.25);
  metric->set_canary_at_percentile(1.875);
  metric->set_p_value(0.0004);
  metric->set_test("mann_whitney+exceedance_p95");
  run.add_final_reasons("step 1: latency_ms failed");
  run.set_has_final_reward(true);
  run.set_final_reward(-0.5);
  run.set_budget_remaining_at_start(0.8);
  return run;
}

TEST(CanaryReportTest, HtmlDrawsEverySideOfEveryJudgedStep) {
  const std::string html = CanaryReportHtml(RolledBack());
  // Two charts the page's check measures: the traffic plan and the step.
  EXPECT_EQ(Count(html, "<svg class=\"pl-chart\""), 2u);
  // One line per side, one point per window.
  EXPECT_EQ(Count(html, "<polyline class=\"pl-line\" data-series=\"baseline\""),
            1u);
  EXPECT_EQ(Count(html, "<polyline class=\"pl-line\" data-series=\"canary\""),
            1u);
  EXPECT_EQ(Count(html, "<circle class=\"pl-mark\" data-series=\"canary\""),
            3u);
  // A bar per planned step; the unrun one says so.
  EXPECT_EQ(Count(html, "<rect class=\"pl-mark\""), 2u);
  EXPECT_NE(html.find("<title>step 2: not run</title>"), std::string::npos);
  EXPECT_NE(html.find("step 1: latency_ms failed"), std::string::npos);
  EXPECT_NE(html.find("80.0 %"), std::string::npos);
  EXPECT_NE(html.find("-0.5000"), std::string::npos);
  // The steps table shows the p95s the judge compared (every request), and
  // which test gave the p-value (the tail's too, for a p95 rule).
  EXPECT_NE(html.find("<td>1.250</td><td>1.875</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>0.0004</td><td>mann_whitney+exceedance_p95</td>"),
            std::string::npos);
  // Names are escaped, and nothing is fetched from elsewhere.
  EXPECT_NE(html.find("cand&lt;1&gt;"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST(CanaryReportTest, TableListsRunsWithTheirOutcome) {
  const std::string table = CanaryRunsTable({RolledBack()});
  EXPECT_NE(table.find("demo-1"), std::string::npos);
  EXPECT_NE(table.find("rolled_back"), std::string::npos);
  EXPECT_NE(table.find("1/2"), std::string::npos);
  EXPECT_NE(table.find("-0.5000"), std::string::npos);
  EXPECT_NE(CanaryRunsTable({}).find("no canary runs"), std::string::npos);
}

TEST(CanaryReportTest, WritesHtmlAndJsonBesideTheState) {
  CanaryStateStore store(testing::MakeTempDir());
  auto path = WriteCanaryReport(store, RolledBack());
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_NE(testing::ReadFileOrEmpty(*path).find("<svg"), std::string::npos);
  auto parsed = CanaryRunFromJson(
      testing::ReadFileOrEmpty(store.RunDir("demo-1") + "/report.json"), "x");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->steps(0).canary_p95_ms_size(), 3);
}

}  // namespace
}  // namespace phaseloop::canary
