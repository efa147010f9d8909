#include "reward_engine/engine/reward_calculator.h"

#include <gtest/gtest.h>

#include <cmath>

namespace phaseloop::reward_engine {
namespace {

GroupWindow Group(const std::string& group, const std::string& deployment,
                  double scale, int64_t errors) {
  GroupWindow g;
  g.group = group;
  g.deployment_id = deployment;
  g.policy_version = "pol-" + group;
  g.sli_windows = 2;
  g.error_count = errors;
  // Latencies scale * 1..100 ms: p95 is about scale * 95 ms.
  for (int i = 1; i <= 100; ++i)
    EXPECT_TRUE(g.sketch.Add(scale * i / 1000.0).ok());
  return g;
}

ClosedWindow Window() {
  ClosedWindow w;
  w.service = "checkout";
  w.window_start_ms = 60000;
  w.window_end_ms = 120000;
  w.groups.push_back(Group("baseline", "d1", 1.0, 0));
  w.groups.push_back(Group("canary", "d2", 2.0, 3));
  return w;
}

TEST(RewardCalculatorTest, RewardsRelativeRewardsAndGoodCounts) {
  const double slo = 0.100;  // 100 ms
  WindowRewards out = ComputeRewards(Window(), slo);
  ASSERT_EQ(out.rewards.size(), 2u);
  const v1::Reward& baseline = out.rewards[0];
  const v1::Reward& canary = out.rewards[1];
  EXPECT_EQ(baseline.reward_id(), "canary/checkout/d1/60000/baseline");
  EXPECT_EQ(canary.reward_id(), "canary/checkout/d2/60000/canary");
  EXPECT_NEAR(baseline.p95_seconds(), 0.095, 0.095 * 0.01);
  EXPECT_NEAR(canary.p95_seconds(), 0.190, 0.190 * 0.01);
  EXPECT_DOUBLE_EQ(baseline.reward(), std::log(slo / baseline.p95_seconds()));
  EXPECT_GT(baseline.reward(), 0);  // inside the SLO
  EXPECT_LT(canary.reward(), 0);    // outside
  EXPECT_FALSE(baseline.has_relative_reward());
  ASSERT_TRUE(canary.has_relative_reward());
  EXPECT_NEAR(canary.relative_reward(), std::log(0.5), 0.02);  // slower
  EXPECT_EQ(canary.baseline_deployment_id(), "d1");
  EXPECT_EQ(canary.count(), 100);
  EXPECT_EQ(canary.error_count(), 3);
  // Canary: 2..200 ms, 50 of them <= 100 ms (+ at most the one bucket), minus
  // 3 errors. Baseline: all 100 within the SLO.
  EXPECT_NEAR(canary.good_count(), 47, 1);
  EXPECT_EQ(baseline.good_count(), 100);
  // Each record carries the group's merged sketch, so a canary step can merge
  // windows and judge every request.
  auto canary_sketch = sli::LatencySketch::FromProto(canary.sketch());
  ASSERT_TRUE(canary_sketch.ok()) << canary_sketch.status();
  EXPECT_EQ(canary_sketch->count(), 100);
  EXPECT_NEAR(*canary_sketch->Quantile(0.95), canary.p95_seconds(), 1e-12);
  ASSERT_EQ(out.final_rewards.size(), 2u);
  EXPECT_EQ(out.final_rewards[1].reward_id(), canary.reward_id());
  EXPECT_EQ(out.final_rewards[1].source(), "canary");
  EXPECT_EQ(out.final_rewards[1].deployment_id(), "d2");
  EXPECT_EQ(out.final_rewards[1].policy_version(), "pol-canary");
  EXPECT_EQ(out.final_rewards[1].window_start_ms(), 60000);
  EXPECT_DOUBLE_EQ(out.final_rewards[1].value(), canary.reward());
  // The buffer's record carries the relative reward; the baseline's has none.
  ASSERT_TRUE(out.final_rewards[1].has_relative_value());
  EXPECT_DOUBLE_EQ(out.final_rewards[1].relative_value(),
                   canary.relative_reward());
  EXPECT_EQ(out.final_rewards[1].baseline_deployment_id(), "d1");
  EXPECT_FALSE(out.final_rewards[0].has_relative_value());
  EXPECT_EQ(out.final_rewards[0].baseline_deployment_id(), "");
  ASSERT_EQ(out.observations.size(), 2u);
  EXPECT_EQ(out.observations[1].total, 100);
  EXPECT_EQ(out.observations[1].good, canary.good_count());
  // Deterministic: the same window gives byte-identical records.
  WindowRewards again = ComputeRewards(Window(), slo);
  EXPECT_EQ(again.rewards[1].SerializeAsString(), canary.SerializeAsString());
  EXPECT_EQ(again.final_rewards[1].SerializeAsString(),
            out.final_rewards[1].SerializeAsString());
}

// Synthetic latencies, a canary 0.5 % faster than its baseline at every
// request: the relative reward reads about log(1.005) = 0.005, not 0 (plain
// sketch quantiles move in whole buckets of log gamma = 0.01).
TEST(RewardCalculatorTest, FailuresOfKnownLatencyCountOnceInTheGoodCount) {
  ClosedWindow window = Window();
  GroupWindow& canary = window.groups[1];  // 2..200 ms, 3 failures
  // Two failures at 150 and 200 ms (outside the 100 ms SLO, already not
  // good), the third of unknown latency.
  ASSERT_TRUE(canary.error_sketch.Add(0.150).ok());
  ASSERT_TRUE(canary.error_sketch.Add(0.200).ok());
  WindowRewards out = ComputeRewards(window, 0.100);
  ASSERT_EQ(out.rewards.size(), 2u);
  EXPECT_NEAR(out.rewards[1].good_count(), 50 - 1, 1);
  auto failures = sli::LatencySketch::FromProto(out.rewards[1].error_sketch());
  ASSERT_TRUE(failures.ok()) << failures.status();
  EXPECT_EQ(failures->count(), 2);
  EXPECT_FALSE(out.rewards[0].has_error_sketch());  // no failures
  ASSERT_EQ(out.observations.size(), 2u);
  EXPECT_EQ(out.observations[1].error_latencies.count(), 2);
  EXPECT_EQ(out.observations[1].good, out.rewards[1].good_count());
}

TEST(RewardCalculatorTest, RelativeRewardResolvesHalfAPercent) {
  for (double spread : {0.3, 0.6, 1.0}) {
    ClosedWindow w;
    w.service = "checkout";
    w.window_start_ms = 0;
    w.window_end_ms = 60000;
    for (const char* name : {"baseline", "canary"}) {
      GroupWindow g;
      g.group = name;
      g.deployment_id = name;
      const double scale = std::string(name) == "canary" ? 1 / 1.005 : 1.0;
      // 20000 evenly spaced quantiles of a lognormal around 50 ms.
      for (int i = 0; i < 20000; ++i) {
        const double z = std::sqrt(2.0) * std::erfc(2.0 * (i + 0.5) / 20000);
        ASSERT_TRUE(
            g.sketch.Add(scale * 0.05 * std::exp(spread * (z - 1.0))).ok());
      }
      w.groups.push_back(std::move(g));
    }
    WindowRewards out = ComputeRewards(w, 0.2);
    ASSERT_EQ(out.rewards.size(), 2u);
    const v1::Reward& canary = out.rewards[1];
    ASSERT_TRUE(canary.has_relative_reward());
    EXPECT_NEAR(canary.relative_reward(), std::log(1.005), 0.001) << spread;
  }
}

TEST(RewardCalculatorTest, NoRelativeRewardWithoutExactlyOneBaseline) {
  ClosedWindow w = Window();
  // Groups come ordered by (group, deployment), as CloseReady gives them.
  w.groups.insert(w.groups.begin() + 1, Group("baseline", "d3", 1.0, 0));
  WindowRewards out = ComputeRewards(w, 0.1);
  for (const v1::Reward& r : out.rewards) EXPECT_FALSE(r.has_relative_reward());
  // Two baseline deployments: one budget observation for the group.
  EXPECT_EQ(out.observations.size(), 2u);
  EXPECT_EQ(out.observations[0].total, 200);
}

TEST(RewardCalculatorTest, EmptyGroupsAndZeroLatenciesStayFinite) {
  ClosedWindow w;
  w.service = "s";
  GroupWindow empty;
  empty.group = "canary";
  w.groups.push_back(empty);
  GroupWindow zeros;
  zeros.group = "baseline";
  ASSERT_TRUE(zeros.sketch.Add(0, 10).ok());
  w.groups.push_back(zeros);
  WindowRewards out = ComputeRewards(w, 0.1);
  EXPECT_EQ(out.empty_groups, 1);
  ASSERT_EQ(out.rewards.size(), 1u);
  EXPECT_TRUE(std::isfinite(out.rewards[0].reward()));
  EXPECT_EQ(out.rewards[0].good_count(), 10);
}

}  // namespace
}  // namespace phaseloop::reward_engine
