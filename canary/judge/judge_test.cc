#include "canary/judge/judge.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "staging_harness/stats/mann_whitney.h"

namespace phaseloop::canary {
namespace {

// Latencies around `median_ms` with a log-normal spread (sigma 0.25), from
// a seeded mt19937 (its output is fixed by the standard) by Box-Muller, so
// the samples are the same on every machine.
std::vector<double> Latencies(uint32_t seed, int n, double median_ms) {
  std::mt19937 rng(seed);
  auto uniform = [&rng] { return (rng() + 0.5) / 4294967296.0; };
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    const double z =
        std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform());
    out.push_back(median_ms * std::exp(0.25 * z));
  }
  return out;
}

std::vector<double> Scaled(std::vector<double> values, double factor) {
  for (double& v : values) v *= factor;
  return values;
}

JudgeConfig Config() { return JudgeConfig(); }  // the documented defaults

TEST(Judge, AaSamplesPass) {
  const Judgement j =
      Judge({{"latency_ms", {Latencies(1, 400, 100), Latencies(2, 400, 100)}}},
            Config());
  EXPECT_EQ(j.outcome, Outcome::kPass) << j.reasons[0];
  EXPECT_EQ(j.score, 100);
  ASSERT_EQ(j.metrics.size(), 1u);
  EXPECT_EQ(j.metrics[0].outcome, Outcome::kPass);
  EXPECT_GT(*j.metrics[0].p_value, 0.05);
  EXPECT_NEAR(*j.metrics[0].ratio, 1, 0.05);
}

// Finite values near the double range: the interpolated median overflowed
// and the metric read ratio 0, a Pass (black-box review).
TEST(Judge, APercentileThatOverflowsIsInconclusive) {
  std::vector<double> base, cand(60, 1.7e308);
  for (int i = 0; i < 60; ++i) base.push_back(i % 2 ? 1.7e308 : -1.7e308);
  const Judgement j = Judge({{"latency_ms", {base, cand}}}, Config());
  ASSERT_EQ(j.metrics.size(), 1u);
  EXPECT_EQ(j.metrics[0].outcome, Outcome::kInconclusive)
      << j.metrics[0].reason;
  EXPECT_NE(j.outcome, Outcome::kPass);
  EXPECT_NE(j.metrics[0].reason.find("overflows"), std::string::npos)
      << j.metrics[0].reason;
}

TEST(Judge, TenPercentSlowerCanaryFails) {
  const std::vector<double> base = Latencies(1, 400, 100);
  const Judgement j = Judge(
      {{"latency_ms", {base, Scaled(Latencies(2, 400, 100), 1.10)}}}, Config());
  EXPECT_EQ(j.outcome, Outcome::kFail);
  EXPECT_EQ(j.score, 0);
  EXPECT_EQ(j.metrics[0].outcome, Outcome::kFail);
  EXPECT_LT(*j.metrics[0].p_value, 0.05);
  EXPECT_GT(*j.metrics[0].ratio, 1.05);
  EXPECT_NE(j.metrics[0].reason.find("significant increase"), std::string::npos)
      << j.metrics[0].reason;
}

TEST(Judge, FasterCanaryPassesWhenIncreaseIsBad) {
  const Judgement j =
      Judge({{"latency_ms",
              {Latencies(1, 400, 100), Scaled(Latencies(2, 400, 100), 0.9)}}},
            Config());
  EXPECT_EQ(j.outcome, Outcome::kPass);
  EXPECT_LT(*j.metrics[0].p_value, 0.05);  // a real change, the good way
}

TEST(Judge, DirectionDecreaseAndEither) {
  JudgeConfig config = Config();
  config.defaults.direction = Direction::kDecrease;
  const Samples lower = {Latencies(1, 400, 100),
                         Scaled(Latencies(2, 400, 100), 0.9)};
  const Samples higher = {Latencies(1, 400, 100),
                          Scaled(Latencies(2, 400, 100), 1.1)};
  EXPECT_EQ(Judge({{"rps", lower}}, config).outcome, Outcome::kFail);
  EXPECT_EQ(Judge({{"rps", higher}}, config).outcome, Outcome::kPass);
  config.defaults.direction = Direction::kEither;
  EXPECT_EQ(Judge({{"rps", lower}}, config).outcome, Outcome::kFail);
  EXPECT_EQ(Judge({{"rps", higher}}, config).outcome, Outcome::kFail);
}

TEST(Judge, SignificantButSmallEffectPasses) {
  // +10 % is significant; allowing up to +15 % lets it pass.
  JudgeConfig config = Config();
  config.defaults.allowed_increase = 1.15;
  const Judgement j =
      Judge({{"latency_ms",
              {Latencies(1, 400, 100), Scaled(Latencies(2, 400, 100), 1.10)}}},
            config);
  EXPECT_EQ(j.outcome, Outcome::kPass) << j.metrics[0].reason;
  EXPECT_LT(*j.metrics[0].p_value, 0.05);
}

TEST(Judge, LooksTooSlowButNotSignificantIsInconclusive) {
  // Nine windows a side, as a rollout step has: the canary's median is 21 %
  // higher, but the spread hides it from the test. That is not a Pass.
  const std::vector<double> base = {2.87, 2.35, 2.12, 1.81, 2.32,
                                    1.54, 2.47, 1.67, 2.54};
  const std::vector<double> canary = {2.81, 2.30, 1.12, 3.72, 3.26,
                                      1.96, 2.47, 3.75, 3.10};
  JudgeConfig config = Config();
  config.min_samples = 8;  // configs/canary/rollout_judge.yaml's
  const Judgement j = Judge({{"p95_ms", {base, canary}}}, config);
  ASSERT_EQ(j.metrics.size(), 1u);
  EXPECT_GT(*j.metrics[0].p_value, 0.05);
  EXPECT_GT(*j.metrics[0].ratio, 1.05);
  EXPECT_EQ(j.metrics[0].outcome, Outcome::kInconclusive);
  EXPECT_EQ(j.outcome, Outcome::kInconclusive);
  EXPECT_NE(j.metrics[0].reason.find("more data needed"), std::string::npos)
      << j.metrics[0].reason;
  // The same spread with the canary a little faster passes.
  const Judgement faster = Judge({{"p95_ms", {canary, base}}}, config);
  EXPECT_EQ(faster.outcome, Outcome::kPass) << faster.metrics[0].reason;
  // A last look (unproven_change: pass) lets it through, and says why.
  config.unproven_change = UnprovenChange::kPass;
  const Judgement last = Judge({{"p95_ms", {base, canary}}}, config);
  EXPECT_EQ(last.outcome, Outcome::kPass);
  EXPECT_NE(last.metrics[0].reason.find("not significant"), std::string::npos)
      << last.metrics[0].reason;
  EXPECT_NE(last.metrics[0].reason.find("unproven_change: pass"),
            std::string::npos);
  // Too few samples is never passed that way.
  config.min_samples = 20;
  EXPECT_EQ(Judge({{"p95_ms", {base, canary}}}, config).outcome,
            Outcome::kInconclusive);
}

TEST(Judge, TooFewSamplesIsInconclusive) {
  const Judgement j =
      Judge({{"latency_ms",
              {Latencies(1, 49, 100), Scaled(Latencies(2, 400, 100), 1.5)}}},
            Config());
  EXPECT_EQ(j.outcome, Outcome::kInconclusive);
  EXPECT_EQ(j.metrics[0].outcome, Outcome::kInconclusive);
  EXPECT_NE(j.metrics[0].reason.find("not enough data"), std::string::npos);
  EXPECT_FALSE(j.metrics[0].p_value.has_value());
}

TEST(Judge, EmptySideIsError) {
  const std::pair<Samples, std::string> cases[] = {
      {Samples{{}, Latencies(2, 400, 100)}, "baseline has no samples"},
      {Samples{Latencies(1, 400, 100), {}}, "canary has no samples"},
      {Samples{{}, {}}, "neither baseline nor canary has any samples"}};
  for (const auto& [samples, said] : cases) {
    const Judgement j = Judge({{"latency_ms", samples}}, Config());
    EXPECT_EQ(j.outcome, Outcome::kError);
    EXPECT_NE(j.reasons[0].find("no data: " + said), std::string::npos)
        << j.reasons[0];
  }
}

TEST(Judge, ErrorWinsOverPassAndFail) {
  const Judgement j =
      Judge({{"latency_ms",
              {Latencies(1, 400, 100), Scaled(Latencies(2, 400, 100), 1.10)}},
             {"errors", {{}, {}}}},
            Config());
  EXPECT_EQ(j.outcome, Outcome::kError);
}

TEST(Judge, NonFiniteSampleIsError) {
  std::vector<double> canary = Latencies(2, 400, 100);
  canary[7] = std::nan("");
  EXPECT_EQ(Judge({{"latency_ms", {Latencies(1, 400, 100), canary}}}, Config())
                .outcome,
            Outcome::kError);
}

TEST(Judge, ConfiguredMetricMissingFromRequestIsError) {
  JudgeConfig config = Config();
  config.metrics["error_rate"] = config.defaults;
  const Judgement j =
      Judge({{"latency_ms", {Latencies(1, 400, 100), Latencies(2, 400, 100)}}},
            config);
  EXPECT_EQ(j.outcome, Outcome::kError);
  EXPECT_NE(j.reasons[0].find("error_rate: Error: no data"), std::string::npos)
      << j.reasons[0];
}

TEST(Judge, NoMetricsAtAllIsError) {
  EXPECT_EQ(Judge({}, Config()).outcome, Outcome::kError);
}

// Four metrics: three pass (A/A), one fails (+10 %).
std::map<std::string, Samples> ThreePassOneFails() {
  std::map<std::string, Samples> m;
  m["a"] = {Latencies(1, 400, 100), Latencies(2, 400, 100)};
  m["b"] = {Latencies(3, 400, 50), Latencies(4, 400, 50)};
  m["c"] = {Latencies(5, 400, 20), Latencies(6, 400, 20)};
  m["slow"] = {Latencies(7, 400, 100), Scaled(Latencies(8, 400, 100), 1.1)};
  return m;
}

TEST(Judge, CriticalMetricFailingFailsTheWhole) {
  JudgeConfig config = Config();
  config.marginal_score = 50;
  config.pass_score = 70;  // 75 % passing would Pass...
  EXPECT_EQ(Judge(ThreePassOneFails(), config).outcome, Outcome::kPass);
  MetricRule critical = config.defaults;
  critical.critical = true;
  config.metrics["slow"] = critical;  // ...unless the failure is critical
  const Judgement j = Judge(ThreePassOneFails(), config);
  EXPECT_EQ(j.outcome, Outcome::kFail);
  EXPECT_EQ(j.score, 75);
  EXPECT_NE(j.reasons[0].find("slow (critical): Fail"), std::string::npos);
}

TEST(Judge, ScoreThresholds) {
  JudgeConfig config = Config();
  config.pass_score = 80;
  config.marginal_score = 60;
  EXPECT_EQ(Judge(ThreePassOneFails(), config).outcome,
            Outcome::kInconclusive);  // 75: between
  config.marginal_score = 76;
  config.pass_score = 90;
  EXPECT_EQ(Judge(ThreePassOneFails(), config).outcome,
            Outcome::kFail);  // 75 < marginal
  config.marginal_score = 50;
  config.pass_score = 75;
  EXPECT_EQ(Judge(ThreePassOneFails(), config).outcome,
            Outcome::kPass);  // 75 >= pass
  // Weights move the score: the failing metric weighs 3 of 6.
  MetricRule heavy = config.defaults;
  heavy.weight = 3;
  config.metrics["slow"] = heavy;
  const Judgement j = Judge(ThreePassOneFails(), config);
  EXPECT_EQ(j.score, 50);
  EXPECT_EQ(j.outcome, Outcome::kInconclusive);
}

TEST(Judge, InconclusiveMetricKeepsAPassFromShipping) {
  std::map<std::string, Samples> m = ThreePassOneFails();
  m.erase("slow");
  m["new"] = {Latencies(9, 10, 100), Latencies(10, 10, 100)};
  const Judgement j = Judge(m, Config());
  EXPECT_EQ(j.score, 100);
  EXPECT_EQ(j.outcome, Outcome::kInconclusive);
}

TEST(Judge, SloThresholdFailsAMetricWithoutAChange) {
  JudgeConfig config = Config();
  config.defaults.slo_p95 = 120;  // p95 of median 100, sigma 0.25: ~150
  const Judgement j =
      Judge({{"latency_ms", {Latencies(1, 400, 100), Latencies(2, 400, 100)}}},
            config);
  EXPECT_EQ(j.outcome, Outcome::kFail);
  EXPECT_NE(j.metrics[0].reason.find("above the SLO threshold 120"),
            std::string::npos)
      << j.metrics[0].reason;
  config.defaults.slo_p95 = 400;
  EXPECT_EQ(
      Judge({{"latency_ms", {Latencies(1, 400, 100), Latencies(2, 400, 100)}}},
            config)
          .outcome,
      Outcome::kPass);
}

TEST(Judge, EffectSizeOnAPercentile) {
  // Same median, canary tail 30 % longer: the median gate passes, a p95
  // gate fails (the test sees the change in the upper half).
  std::vector<double> base = Latencies(1, 2000, 100);
  std::vector<double> canary = Latencies(2, 2000, 100);
  for (double& v : canary) {
    if (v > 100) v = 100 + (v - 100) * 1.6;
  }
  JudgeConfig config = Config();
  const Judgement median = Judge({{"l", {base, canary}}}, config);
  EXPECT_LT(*median.metrics[0].ratio, 1.05);
  config.defaults.percentile = 95;
  const Judgement p95 = Judge({{"l", {base, canary}}}, config);
  EXPECT_GT(*p95.metrics[0].ratio, 1.05);
  EXPECT_LT(*p95.metrics[0].p_value, 0.05);
  EXPECT_EQ(p95.outcome, Outcome::kFail) << p95.metrics[0].reason;
}

// The review's case: the canary's slowest tenth 25 % slower, the median
// unchanged. Mann-Whitney alone gave p = 0.12, so the p95 rule's 1.2x was
// "not significant" and a last look (unproven_change: pass) shipped it; the
// tail test finds it, with the rollout judge's settings (99 %, p95).
TEST(Judge, TailOnlyRegressionFailsAP95Rule) {
  const std::vector<double> base = Latencies(1, 1000, 15);
  std::vector<double> canary = Latencies(2, 1000, 15);
  std::vector<double> sorted = base;
  std::sort(sorted.begin(), sorted.end());
  const double p90 = sorted[900];
  for (double& v : canary) {
    if (v > p90) v *= 1.25;
  }
  JudgeConfig config = Config();
  config.confidence = 0.99;
  config.unproven_change = UnprovenChange::kPass;
  config.defaults.percentile = 95;
  config.defaults.min_samples = 300;
  const auto mann_whitney = stats::MannWhitneyU(base, canary);
  ASSERT_TRUE(mann_whitney.ok());
  EXPECT_GT(mann_whitney->p_value, 0.01);  // what alone let it pass
  const Judgement j = Judge({{"latency_ms", {base, canary}}}, config);
  EXPECT_EQ(j.outcome, Outcome::kFail) << j.metrics[0].reason;
  EXPECT_GT(*j.metrics[0].ratio, 1.05);
  EXPECT_LT(*j.metrics[0].p_value, 0.01);
  EXPECT_EQ(j.metrics[0].test, "mann_whitney+exceedance_p95");
  // The median rule keeps Mann-Whitney alone; so does a p95 rule over too
  // few samples for a tail (8 a side: 0.8 expected beyond the p95), whose
  // p is Mann-Whitney's, not halved by a test that could find nothing.
  config.defaults.percentile = 50;
  EXPECT_EQ(Judge({{"latency_ms", {base, canary}}}, config).metrics[0].test,
            "mann_whitney");
  config.defaults.percentile = 95;
  config.defaults.min_samples = 8;
  const std::vector<double> few_base(base.begin(), base.begin() + 8);
  const std::vector<double> few_canary(canary.begin(), canary.begin() + 8);
  const Judgement few = Judge({{"error_rate", {few_base, few_canary}}}, config);
  EXPECT_EQ(few.metrics[0].test, "mann_whitney");
  EXPECT_DOUBLE_EQ(*few.metrics[0].p_value,
                   stats::MannWhitneyU(few_base, few_canary)->p_value);
}

}  // namespace
}  // namespace phaseloop::canary
