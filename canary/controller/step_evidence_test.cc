#include "canary/controller/step_evidence.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace phaseloop::canary {
namespace {

v1::Reward Window(const std::string& deployment, int64_t start_ms,
                  double p95_ms, int64_t count, int64_t errors) {
  v1::Reward reward;
  reward.set_service("demo");
  reward.set_deployment_id(deployment);
  reward.set_window_start_ms(start_ms);
  reward.set_window_end_ms(start_ms + 1000);
  reward.set_reward_id(absl::StrCat(deployment, "/", start_ms));
  reward.set_p95_seconds(p95_ms / 1000);
  reward.set_count(count);
  reward.set_error_count(errors);
  return reward;
}

StepWindowFilter Filter() {
  StepWindowFilter filter;
  filter.service = "demo";
  filter.baseline_deployment_id = "b";
  filter.canary_deployment_id = "c";
  filter.from_ms = 10000;
  filter.to_ms = 14000;
  return filter;
}

TEST(StepEvidenceTest, OneSamplePerWindowInsideTheRange) {
  std::vector<v1::Reward> rewards = {
      Window("b", 9000, 99, 10, 0),   // before the range
      Window("b", 10000, 10, 10, 0),  // in
      Window("b", 11000, 12, 10, 1),  // in
      Window("b", 13500, 50, 10, 0),  // ends after the range
      Window("c", 10000, 20, 4, 0),   // in
      Window("c", 12000, 30, 0, 0),   // no requests: no sample
      Window("x", 10000, 5, 10, 0),   // another deployment
  };
  rewards.push_back(Window("c", 11000, 22, 5, 0));
  v1::Reward other = Window("c", 10000, 1, 1, 0);
  other.set_service("other");
  rewards.push_back(other);
  const StepEvidence evidence = EvidenceFromRewards(rewards, Filter());
  EXPECT_EQ(evidence.baseline_windows, 2);
  EXPECT_EQ(evidence.canary_windows, 2);
  const Samples& latency = evidence.metrics.at("p95_latency_ms");
  EXPECT_EQ(latency.baseline, (std::vector<double>{10, 12}));
  EXPECT_EQ(latency.canary, (std::vector<double>{20, 22}));
  EXPECT_EQ(evidence.metrics.at("error_rate").baseline,
            (std::vector<double>{0, 0.1}));
  EXPECT_EQ(evidence.baseline_newest_end_ms, 14500);
  EXPECT_EQ(evidence.canary_newest_end_ms, 13000);
  EXPECT_NEAR(evidence.relative_reward, std::log(11.0 / 21.0), 1e-9);
}

TEST(StepEvidenceTest, AReplayedWindowCountsOnceWithItsLastValue) {
  std::vector<v1::Reward> rewards = {Window("b", 10000, 10, 10, 0),
                                     Window("b", 10000, 14, 10, 0),
                                     Window("c", 10000, 10, 10, 0)};
  const StepEvidence evidence = EvidenceFromRewards(rewards, Filter());
  EXPECT_EQ(evidence.baseline_windows, 1);
  EXPECT_EQ(evidence.metrics.at("p95_latency_ms").baseline,
            (std::vector<double>{14}));
}

TEST(StepEvidenceTest, NoWindowsGiveEmptySamplesAndNoReward) {
  const StepEvidence evidence = EvidenceFromRewards({}, Filter());
  EXPECT_EQ(evidence.baseline_windows, 0);
  EXPECT_TRUE(evidence.metrics.at("p95_latency_ms").canary.empty());
  EXPECT_EQ(evidence.relative_reward, 0);
}

}  // namespace
}  // namespace phaseloop::canary
