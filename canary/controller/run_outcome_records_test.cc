#include "canary/controller/run_outcome_records.h"

#include <tuple>

#include "gtest/gtest.h"

namespace phaseloop::canary {
namespace {

v1::CanaryRun FinishedRun() {
  v1::CanaryRun run;
  run.set_canary_id("demo-2");
  run.set_service("demo-service");
  run.set_phase("promoting");
  run.set_stable_version("pol-1");
  run.set_candidate_version("pol-2");
  run.set_baseline_build_id("svc-stable-1");
  run.set_candidate_build_id("svc-candidate-2");
  run.set_baseline_deployment_id("demo-2-baseline");
  run.set_canary_deployment_id("demo-2-canary");
  run.set_created_ms(1000);
  run.set_has_final_reward(true);
  run.set_final_reward(0.03);
  // Judged steps: +0.01 over 2 canary windows, +0.04 over 1; one without
  // baseline windows does not count.
  for (const auto& [reward, canary, baseline] :
       {std::tuple{0.01, 2, 2}, std::tuple{0.04, 1, 1},
        std::tuple{0.5, 3, 0}}) {
    v1::CanaryStepResult* step = run.add_steps();
    step->set_relative_reward(reward);
    step->set_canary_windows(canary);
    step->set_baseline_windows(baseline);
  }
  return run;
}

TEST(RunOutcomeRecordsTest, TheRewardNamesTheBuildAndTheStableItWasJudgedBy) {
  const replay_buffer::WriteBatch batch =
      RunOutcomeRecords(FinishedRun(), 5000);
  ASSERT_EQ(batch.rewards.size(), 1u);
  const v1::FinalReward& r = batch.rewards[0];
  EXPECT_EQ(r.reward_id(), "canary-run/demo-2");
  EXPECT_EQ(r.source(), "canary");
  EXPECT_EQ(r.build_id(), "svc-candidate-2");
  EXPECT_EQ(r.policy_version(), "pol-2");
  EXPECT_DOUBLE_EQ(r.value(), 0.03);
  ASSERT_TRUE(r.has_baseline_policy_version());
  EXPECT_EQ(r.baseline_policy_version(), "pol-1");
  // The speed it measured, before the pass bonus: (2 * 0.01 + 0.04) / 3.
  ASSERT_TRUE(r.has_relative_value());
  EXPECT_DOUBLE_EQ(r.relative_value(), 0.02);
  EXPECT_EQ(r.baseline_deployment_id(), "demo-2-baseline");

  ASSERT_EQ(batch.deployments.size(), 2u);
  EXPECT_EQ(batch.deployments[0].role(), "baseline");
  EXPECT_EQ(batch.deployments[0].build_id(), "svc-stable-1");
  EXPECT_EQ(batch.deployments[0].policy_version(), "pol-1");
  EXPECT_EQ(batch.deployments[1].role(), "candidate");
  EXPECT_EQ(batch.deployments[1].status(), "promoted");
  EXPECT_EQ(batch.deployments[1].end_unix_ms(), 5000);
}

TEST(RunOutcomeRecordsTest, PlainClangStableIsAnEmptyVersionNotAMissingOne) {
  v1::CanaryRun run = FinishedRun();
  run.clear_stable_version();
  run.set_phase("rolling_back");
  const replay_buffer::WriteBatch batch = RunOutcomeRecords(run, 5000);
  ASSERT_EQ(batch.rewards.size(), 1u);
  EXPECT_TRUE(batch.rewards[0].has_baseline_policy_version());
  EXPECT_EQ(batch.rewards[0].baseline_policy_version(), "");
  EXPECT_EQ(batch.deployments[1].status(), "rolled_back");
}

TEST(RunOutcomeRecordsTest, ARunWithoutAFinalRewardRecordsOnlyDeployments) {
  v1::CanaryRun run = FinishedRun();
  run.set_has_final_reward(false);
  const replay_buffer::WriteBatch batch = RunOutcomeRecords(run, 5000);
  EXPECT_TRUE(batch.rewards.empty());
  EXPECT_EQ(batch.deployments.size(), 2u);
}

}  // namespace
}  // namespace phaseloop::canary
