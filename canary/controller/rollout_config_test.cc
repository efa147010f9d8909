#include "canary/controller/rollout_config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>

#include "canary/judge/judge.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::canary {
namespace {

absl::StatusOr<RolloutConfig> Parse(const std::string& text,
                                    const std::string& source = "svc.yaml") {
  return ParseRolloutConfig(YAML::Load(text), source);
}

TEST(RolloutConfigTest, ParsesStepsAndDefaults) {
  auto config = Parse(
      "steps: [{weight: 0.05, duration_s: 20}, {weight: 0.25, duration_s: "
      "30}]\nwarmup_s: 4\nmax_extension_s: 12\n");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->steps.size(), 2u);
  EXPECT_EQ(config->steps[1].index(), 1);
  EXPECT_DOUBLE_EQ(config->steps[1].canary_weight(), 0.25);
  EXPECT_EQ(config->steps[1].duration_ms(), 30000);
  EXPECT_EQ(config->steps[1].warmup_ms(), 4000);
  EXPECT_EQ(config->steps[1].max_duration_ms(), 42000);
  EXPECT_EQ(config->judge.min_samples, 8);
  EXPECT_TRUE(config->pass_unproven_at_max);  // the default
  ASSERT_TRUE(config->judge.metrics.count("latency_ms"));
  const MetricRule& latency = config->judge.metrics.at("latency_ms");
  EXPECT_TRUE(latency.critical);
  EXPECT_EQ(latency.percentile, 95);  // the step's p95 over its requests
  EXPECT_EQ(config->judge.MinSamples(latency), 300);
  EXPECT_EQ(config->judge.MinSamples(config->judge.metrics.at("error_rate")),
            8);
}

// Errors in bursts: 14 of the canary's 30 windows fail half their requests,
// the baseline's none. The windows' median is 0 on both sides; the rollout
// judge must still fail the step.
TEST(RolloutConfigTest, TheRolloutJudgeFailsBurstsOfErrors) {
  JudgeConfig judge = DefaultRolloutJudge();
  const MetricRule rule = judge.metrics.at("error_rate");
  judge.metrics = {{"error_rate", rule}};  // the others are not sampled here
  Samples errors;
  errors.baseline.assign(30, 0.0);
  errors.canary.assign(16, 0.0);
  errors.canary.insert(errors.canary.end(), 14, 0.5);
  const Judgement judgement = Judge({{"error_rate", errors}}, judge);
  ASSERT_EQ(judgement.metrics.size(), 1u);
  EXPECT_EQ(judgement.metrics[0].outcome, Outcome::kFail)
      << judgement.metrics[0].reason;
  EXPECT_EQ(judgement.outcome, Outcome::kFail);
  // Errors in two windows of 30: too few to prove, too many to pass.
  errors.canary.assign(28, 0.0);
  errors.canary.insert(errors.canary.end(), 2, 0.5);
  EXPECT_EQ(Judge({{"error_rate", errors}}, judge).outcome,
            Outcome::kInconclusive);
}

TEST(RolloutConfigTest, ErrorsNameTheFileAndField) {
  const struct {
    const char* yaml;
    const char* field;
  } cases[] = {
      {"steps: []", "rollout.steps"},
      {"steps: [{weight: 0.7, duration_s: 20}]", "rollout.steps[0].weight"},
      {"steps: [{weight: 0.2, duration_s: 20}, {weight: 0.1, duration_s: 20}]",
       "rollout.steps[1].weight"},
      {"steps: [{weight: 0.1, duration_s: 3}]", "rollout.steps[0].duration_s"},
      {"steps: [{weight: 0.1, duration_s: 20, extra: 1}]",
       "rollout.steps[0].extra"},
      {"steps: [{weight: 0.1, duration_s: 20}]\nwarmup: 3", "rollout.warmup"},
      {"steps: [{weight: x, duration_s: 20}]", "rollout.steps[0].weight"},
      {"steps: [{weight: 0.1, duration_s: 20}]\njudge: missing.yaml",
       "rollout.judge"},
      {"steps: [{weight: 0.1, duration_s: 20}]\nunproven_at_max: maybe",
       "rollout.unproven_at_max"},
  };
  for (const auto& c : cases) {
    auto config = Parse(c.yaml, "/etc/svc.yaml");
    ASSERT_FALSE(config.ok()) << c.yaml;
    const std::string message(config.status().message());
    EXPECT_NE(message.find("/etc/svc.yaml"), std::string::npos) << message;
    EXPECT_NE(message.find(c.field), std::string::npos) << message;
  }
}

TEST(RolloutConfigTest, JudgePathIsRelativeToTheServiceFile) {
  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/judge.yaml") << "min_samples: 5\n";
  auto config =
      Parse("steps: [{weight: 0.1, duration_s: 20}]\njudge: judge.yaml\n",
            dir + "/svc.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->judge.min_samples, 5);
}

}  // namespace
}  // namespace phaseloop::canary

namespace phaseloop::canary {
namespace {

void ExpectSameRule(const MetricRule& a, const MetricRule& b,
                    const std::string& what) {
  EXPECT_EQ(a.direction, b.direction) << what;
  EXPECT_EQ(a.percentile, b.percentile) << what;
  EXPECT_EQ(a.allowed_increase, b.allowed_increase) << what;
  EXPECT_EQ(a.allowed_decrease, b.allowed_decrease) << what;
  EXPECT_EQ(a.critical, b.critical) << what;
  EXPECT_EQ(a.weight, b.weight) << what;
  EXPECT_EQ(a.slo_p95.has_value(), b.slo_p95.has_value()) << what;
  EXPECT_EQ(a.min_samples, b.min_samples) << what;
}

TEST(RolloutConfigTest, ShippedRolloutJudgeIsTheBuiltInOne) {
  auto file = LoadJudgeConfig("configs/canary/rollout_judge.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  const JudgeConfig built_in = DefaultRolloutJudge();
  EXPECT_EQ(file->confidence, built_in.confidence);
  EXPECT_EQ(file->min_samples, built_in.min_samples);
  EXPECT_EQ(file->pass_score, built_in.pass_score);
  EXPECT_EQ(file->marginal_score, built_in.marginal_score);
  ExpectSameRule(file->defaults, built_in.defaults, "defaults");
  ASSERT_EQ(file->metrics.size(), built_in.metrics.size());
  for (const auto& [name, rule] : built_in.metrics) {
    ASSERT_TRUE(file->metrics.count(name)) << name;
    ExpectSameRule(file->metrics.at(name), rule, name);
  }
}

}  // namespace
}  // namespace phaseloop::canary
