#include "canary/controller/step_evidence.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "reward_engine/sli/latency_sketch.h"

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
  // Every request took the window's p95 (the sketch's bucket value).
  sli::LatencySketch sketch;
  if (count > 0) {
    EXPECT_TRUE(sketch.Add(p95_ms / 1000, count).ok());
  }
  *reward.mutable_sketch() = sketch.ToProto();
  return reward;
}

// The value the sketch stands for `ms` (within 0.5 %).
double BucketMs(double ms) {
  const sli::LatencySketch sketch;
  return sketch.mapping().Value(sketch.mapping().Index(ms / 1000)) * 1000;
}

std::vector<double> Repeated(double ms, int times) {
  return std::vector<double>(times, BucketMs(ms));
}

std::vector<double> Concat(std::vector<double> a, const std::vector<double>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
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

TEST(StepEvidenceTest, EveryRequestOfTheWindowsInsideTheRange) {
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
  // Requests of both in-range windows per side, in latency order.
  const Samples& latency = evidence.metrics.at("latency_ms");
  EXPECT_EQ(latency.baseline, Concat(Repeated(10, 10), Repeated(12, 10)));
  EXPECT_EQ(latency.canary, Concat(Repeated(20, 4), Repeated(22, 5)));
  EXPECT_EQ(evidence.metrics.at("latency_median_ms").canary, latency.canary);
  EXPECT_EQ(evidence.metrics.at("error_rate").baseline,
            (std::vector<double>{0, 0.1}));
  EXPECT_EQ(evidence.baseline_window_p95_ms, (std::vector<double>{10, 12}));
  EXPECT_EQ(evidence.canary_window_p95_ms, (std::vector<double>{20, 22}));
  EXPECT_EQ(evidence.windows_without_sketch, 0);
  EXPECT_EQ(evidence.baseline_newest_end_ms, 14500);
  EXPECT_EQ(evidence.canary_newest_end_ms, 13000);
  // The step's p95s: 12 ms of the baseline's 20 requests, 22 of the
  // canary's 9 (interpolated inside their buckets).
  EXPECT_NEAR(evidence.relative_reward, std::log(12.0 / 22.0), 0.02);
}

TEST(StepEvidenceTest, AWindowWithoutASketchIsCountedNotJudged) {
  v1::Reward old = Window("c", 11000, 30, 7, 0);
  old.clear_sketch();  // an engine older than Reward.sketch
  v1::Reward wrong = Window("c", 12000, 30, 7, 0);
  wrong.set_count(8);  // the sketch holds 7
  const std::vector<v1::Reward> rewards = {Window("b", 10000, 10, 10, 0),
                                           Window("c", 10000, 20, 4, 0), old,
                                           wrong};
  const StepEvidence evidence = EvidenceFromRewards(rewards, Filter());
  EXPECT_EQ(evidence.canary_windows, 3);
  EXPECT_EQ(evidence.windows_without_sketch, 2);
  EXPECT_EQ(evidence.metrics.at("latency_ms").canary, Repeated(20, 4));
  EXPECT_EQ(evidence.metrics.at("error_rate").canary.size(), 3u);
}

TEST(StepEvidenceTest, ManyRequestsAreThinnedToEvenlySpacedRanks) {
  v1::Reward big = Window("b", 10000, 10, 0, 0);
  sli::LatencySketch sketch;
  const int64_t fast = 3 * kMaxLatencySamples, slow = kMaxLatencySamples;
  ASSERT_TRUE(sketch.Add(0.010, fast).ok());
  ASSERT_TRUE(sketch.Add(0.020, slow).ok());
  *big.mutable_sketch() = sketch.ToProto();
  big.set_count(fast + slow);
  const StepEvidence evidence = EvidenceFromRewards({big}, Filter());
  const std::vector<double>& values = evidence.metrics.at("latency_ms").baseline;
  ASSERT_EQ(values.size(), static_cast<size_t>(kMaxLatencySamples));
  // Three quarters fast, one quarter slow, in order.
  EXPECT_EQ(std::count(values.begin(), values.end(), BucketMs(10)),
            3 * kMaxLatencySamples / 4);
  EXPECT_EQ(values.back(), BucketMs(20));
  EXPECT_TRUE(std::is_sorted(values.begin(), values.end()));
}

TEST(StepEvidenceTest, AReplayedWindowCountsOnceWithItsLastValue) {
  std::vector<v1::Reward> rewards = {Window("b", 10000, 10, 10, 0),
                                     Window("b", 10000, 14, 10, 0),
                                     Window("c", 10000, 10, 10, 0)};
  const StepEvidence evidence = EvidenceFromRewards(rewards, Filter());
  EXPECT_EQ(evidence.baseline_windows, 1);
  EXPECT_EQ(evidence.metrics.at("latency_ms").baseline, Repeated(14, 10));
  EXPECT_EQ(evidence.baseline_window_p95_ms, (std::vector<double>{14}));
}

TEST(StepEvidenceTest, NoWindowsGiveEmptySamplesAndNoReward) {
  const StepEvidence evidence = EvidenceFromRewards({}, Filter());
  EXPECT_EQ(evidence.baseline_windows, 0);
  EXPECT_TRUE(evidence.metrics.at("latency_ms").canary.empty());
  EXPECT_EQ(evidence.relative_reward, 0);
}

}  // namespace
}  // namespace phaseloop::canary
