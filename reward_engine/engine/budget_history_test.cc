#include "reward_engine/engine/budget_history.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace phaseloop::reward_engine {
namespace {

v1::Reward MakeReward(const std::string& group, const std::string& deployment,
                      int64_t start, int64_t count, int64_t good) {
  v1::Reward r;
  r.set_reward_id(
      absl::StrCat("canary/checkout/", deployment, "/", start, "/", group));
  r.set_service("checkout");
  r.set_group(group);
  r.set_deployment_id(deployment);
  r.set_window_start_ms(start);
  r.set_window_end_ms(start + 10000);
  r.set_count(count);
  r.set_good_count(good);
  return r;
}

TEST(BudgetHistoryTest, SumsDeploymentsOfAGroupAndCountsEachRewardOnce) {
  std::vector<v1::Reward> rewards = {
      MakeReward("canary", "dep-a", 0, 100, 90),
      MakeReward("canary", "dep-b", 0, 50, 50),
      MakeReward("baseline", "dep-0", 0, 80, 79),
      // A replay of dep-a's window: the same key, counted once.
      MakeReward("canary", "dep-a", 0, 100, 90),
      MakeReward("canary", "dep-a", 10000, 10, 1),
  };
  BudgetHistory history = HistoryFromRewards(rewards);
  ASSERT_EQ(history.observations.size(), 3u);
  // Ordered by (service, group, window start).
  const slo::SloWindowObservation& baseline = history.observations[0];
  EXPECT_EQ(baseline.group, "baseline");
  EXPECT_EQ(baseline.total, 80);
  EXPECT_EQ(baseline.good, 79);
  const slo::SloWindowObservation& canary0 = history.observations[1];
  EXPECT_EQ(canary0.group, "canary");
  EXPECT_EQ(canary0.window_start_ms, 0);
  EXPECT_EQ(canary0.window_end_ms, 10000);
  EXPECT_EQ(canary0.total, 150);
  EXPECT_EQ(canary0.good, 140);
  EXPECT_EQ(history.observations[2].window_start_ms, 10000);
  EXPECT_EQ(history.observations[2].total, 10);
  EXPECT_EQ(history.newest_window_end_ms, 20000);
}

TEST(BudgetHistoryTest, LaterRecordOfARewardReplacesTheEarlier) {
  std::vector<v1::Reward> rewards = {MakeReward("canary", "dep-a", 0, 100, 90),
                                     MakeReward("canary", "dep-a", 0, 100, 95)};
  BudgetHistory history = HistoryFromRewards(rewards);
  ASSERT_EQ(history.observations.size(), 1u);
  EXPECT_EQ(history.observations[0].good, 95);
}

TEST(BudgetHistoryTest, TheFailuresLatenciesComeBackFromTheRecords) {
  auto reward = [](const std::string& deployment, int64_t slow_failures,
                   bool with_error_sketch) {
    v1::Reward r = MakeReward("canary", deployment, 0, 100, 0);
    sli::LatencySketch all;
    sli::LatencySketch failures;
    for (int i = 0; i < 100; ++i) {
      EXPECT_TRUE(all.Add(i < 90 ? 0.1 : 0.5).ok());
    }
    for (int i = 0; i < slow_failures; ++i) {
      EXPECT_TRUE(failures.Add(0.5).ok());
    }
    *r.mutable_sketch() = all.ToProto();
    r.set_error_count(slow_failures);
    if (with_error_sketch) *r.mutable_error_sketch() = failures.ToProto();
    return r;
  };
  BudgetHistory history =
      HistoryFromRewards({reward("dep-a", 6, true), reward("dep-b", 4, false)});
  ASSERT_EQ(history.observations.size(), 1u);
  const slo::SloWindowObservation& o = history.observations[0];
  ASSERT_TRUE(o.latencies.has_value());
  EXPECT_EQ(o.errors, 10);
  EXPECT_EQ(o.error_latencies.count(), 6);  // dep-b's 4: latency unknown
  // 180 within 250 ms; dep-b's 4 failures taken as within it.
  EXPECT_EQ(slo::GoodRequests(*o.latencies, o.error_latencies, o.errors, 0.25),
            176);
}

TEST(BudgetHistoryTest, NoRewardsNoHistory) {
  BudgetHistory history = HistoryFromRewards({});
  EXPECT_TRUE(history.observations.empty());
  EXPECT_EQ(history.newest_window_end_ms, kNoTime);
}

}  // namespace
}  // namespace phaseloop::reward_engine
