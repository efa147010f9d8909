#include "canary/judge/judge_config.h"

#include <string>

#include "gtest/gtest.h"

namespace phaseloop::canary {
namespace {

void ExpectSameRule(const MetricRule& a, const MetricRule& b) {
  EXPECT_EQ(a.direction, b.direction);
  EXPECT_EQ(a.percentile, b.percentile);
  EXPECT_EQ(a.allowed_increase, b.allowed_increase);
  EXPECT_EQ(a.allowed_decrease, b.allowed_decrease);
  EXPECT_EQ(a.critical, b.critical);
  EXPECT_EQ(a.weight, b.weight);
  EXPECT_EQ(a.slo_p95, b.slo_p95);
  EXPECT_EQ(a.min_samples, b.min_samples);
}

// The shipped file documents the built-in defaults: they must agree.
TEST(JudgeConfig, ShippedFileHoldsTheBuiltInDefaults) {
  auto config = LoadJudgeConfig("configs/canary/judge.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  const JudgeConfig defaults;
  EXPECT_EQ(config->confidence, defaults.confidence);
  EXPECT_EQ(config->min_samples, defaults.min_samples);
  EXPECT_EQ(config->unproven_change, defaults.unproven_change);
  EXPECT_EQ(config->pass_score, defaults.pass_score);
  EXPECT_EQ(config->marginal_score, defaults.marginal_score);
  ExpectSameRule(config->defaults, defaults.defaults);
  EXPECT_TRUE(config->metrics.empty());
  EXPECT_EQ(config->source, "configs/canary/judge.yaml");
}

TEST(JudgeConfig, MetricsOverrideTheDefaults) {
  auto config = ParseJudgeConfigYaml(R"(
confidence: 0.99
min_samples: 20
unproven_change: pass
score: {pass: 90, marginal: 60}
defaults: {allowed_increase: 1.02, percentile: 95}
metrics:
  latency_ms: {critical: true, slo_p95: 250, min_samples: 300}
  rps: {direction: decrease, weight: 2}
  errors:
)",
                                     "t.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->confidence, 0.99);
  EXPECT_EQ(config->min_samples, 20);
  EXPECT_EQ(config->unproven_change, UnprovenChange::kPass);
  EXPECT_EQ(config->pass_score, 90);
  EXPECT_EQ(config->marginal_score, 60);
  const MetricRule& latency = config->RuleFor("latency_ms");
  EXPECT_TRUE(latency.critical);
  EXPECT_EQ(latency.slo_p95, 250);
  EXPECT_EQ(latency.allowed_increase, 1.02);  // inherited
  EXPECT_EQ(latency.percentile, 95);
  EXPECT_EQ(config->MinSamples(latency), 300);                // its own
  EXPECT_EQ(config->MinSamples(config->RuleFor("rps")), 20);  // the top's
  EXPECT_EQ(config->RuleFor("rps").direction, Direction::kDecrease);
  EXPECT_EQ(config->RuleFor("rps").weight, 2);
  ExpectSameRule(config->RuleFor("errors"), config->defaults);
  ExpectSameRule(config->RuleFor("unlisted"), config->defaults);
  EXPECT_EQ(config->metrics.size(), 3u);
}

TEST(JudgeConfig, EmptyFileIsTheDefaults) {
  auto config = ParseJudgeConfigYaml("", "empty.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->confidence, 0.95);
}

// Every field is checked; the message names the file and the field.
TEST(JudgeConfig, EveryBadFieldIsNamed) {
  const std::pair<std::string, std::string> cases[] = {
      {"confidence: 1", "bad.yaml: confidence: 1 is outside (0, 1)"},
      {"confidence: high", "bad.yaml: confidence: expected a number"},
      {"min_samples: 1", "bad.yaml: min_samples: must be at least 2, got 1"},
      {"min_samples: 2.5",
       "bad.yaml: min_samples: expected a whole number, got \"2.5\""},
      {"score: {pass: 101}", "bad.yaml: score.pass: 101 is outside [0, 100]"},
      {"score: {pass: 50, marginal: 60}",
       "bad.yaml: score.marginal: 60 is above score.pass"},
      {"score: {good: 1}", "bad.yaml: score.good: unknown field"},
      {"score: 3", "bad.yaml: score: expected a mapping"},
      {"defaults: {direction: up}",
       "bad.yaml: defaults.direction: \"up\" is not a choice; use increase "
       "(higher is worse, e.g. latency), decrease"},
      {"defaults: {percentile: 100}",
       "bad.yaml: defaults.percentile: 100 is outside (0, 100)"},
      {"defaults: {allowed_increase: 0.9}",
       "bad.yaml: defaults.allowed_increase: must be at least 1, got 0.9"},
      {"defaults: {allowed_decrease: 1.1}",
       "bad.yaml: defaults.allowed_decrease: 1.1 is outside (0, 1]"},
      {"defaults: {critical: maybe}",
       "bad.yaml: defaults.critical: expected true or false"},
      // YAML 1.2's booleans only, as every phaseloop config.
      {"defaults: {critical: yes}",
       "bad.yaml: defaults.critical: expected true or false, got \"yes\" "
       "(configs/canary/judge.yaml documents every field)"},
      {"defaults: {weight: 0}",
       "bad.yaml: defaults.weight: must be above 0, got 0"},
      {"defaults: {slo_p95: -1}",
       "bad.yaml: defaults.slo_p95: must be above 0, got -1"},
      {"unproven_change: maybe",
       "bad.yaml: unproven_change: \"maybe\" is not a choice"},
      {"metrics: {lat: {min_samples: 1}}",
       "bad.yaml: metrics.lat.min_samples: must be at least 2, got 1"},
      {"metrics: {lat: {slo: 3}}", "bad.yaml: metrics.lat.slo: unknown field"},
      {"metrics: [lat]", "bad.yaml: metrics: expected a mapping"},
      {"metrics: {lat: {weight: 1}, lat: {weight: 2}}",
       "bad.yaml: metrics.lat: given twice; keep one"},
      {"confidence: 0.9\nconfidence: 0.5",
       "bad.yaml: confidence: given twice; keep one"},
      {"metrics: {lat: 3}", "bad.yaml: metrics.lat: expected a mapping"},
      {"confidense: 0.9", "bad.yaml: confidense: unknown field"},
      {"[1, 2]", "bad.yaml: (top): expected a mapping"},
      {"a: [", "bad.yaml: not valid YAML"},
  };
  for (const auto& [text, expected] : cases) {
    auto config = ParseJudgeConfigYaml(text, "bad.yaml");
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(config.status().message().find(expected), std::string::npos)
        << text << " gave: " << config.status().message();
  }
}

TEST(JudgeConfig, MissingFileIsNotFound) {
  auto config = LoadJudgeConfig("/nonexistent/judge.yaml");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(config.status().message().find(
                "/nonexistent/judge.yaml; give an existing file "
                "(configs/canary/judge.yaml is an example)"),
            std::string::npos)
      << config.status();
}

}  // namespace
}  // namespace phaseloop::canary
