#ifndef PHASELOOP_CANARY_JUDGE_JUDGE_CONFIG_H_
#define PHASELOOP_CANARY_JUDGE_JUDGE_CONFIG_H_

// What the canary judge (judge.h) allows, from YAML
// (configs/canary/judge.yaml documents every field and its default):
//
//   confidence: 0.95        # a change counts when Mann-Whitney p < 1 - this
//   min_samples: 50         # per side and metric; fewer → Inconclusive
//   score: {pass: 95, marginal: 75}   # 0 <= marginal <= pass <= 100
//   unproven_change: inconclusive  # or pass: a change beyond the allowed
//                           # effect that the test does not find significant
//   defaults:               # every metric's rule unless it says otherwise
//     direction: increase   # which change is bad: increase|decrease|either
//     percentile: 50        # effect size: canary/baseline ratio of this
//                           # percentile (50: medians)
//     allowed_increase: 1.05  # ratio above → Fail (if significant)
//     allowed_decrease: 0.95  # ratio below → Fail (if significant)
//     critical: false       # a critical metric failing fails the judgement
//     weight: 1             # its share of the score
//     slo_p95: none         # a number: canary p95 above it → Fail
//     min_samples: none     # a whole number >= 2 overrides the top level's
//                           # for this metric (per-request metrics beside
//                           # per-window ones)
//   metrics:                # per-metric rules, by name; a metric listed
//     latency_ms: {critical: true, slo_p95: 250}   # here must be in every
//                                                  # request (else Error)
//
// Unknown fields are errors (a file never means something other than what
// it says); every error names the file and the field and says what to do.

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace phaseloop::canary {

// Which way a metric may not move.
enum class Direction { kIncrease, kDecrease, kEither };

std::string DirectionName(Direction direction);  // "increase", ...

struct MetricRule {
  Direction direction = Direction::kIncrease;
  double percentile = 50;          // in (0, 100)
  double allowed_increase = 1.05;  // >= 1
  double allowed_decrease = 0.95;  // in (0, 1]
  bool critical = false;
  double weight = 1;              // > 0
  std::optional<double> slo_p95;  // same unit as the samples; > 0
  // Overrides JudgeConfig::min_samples for this metric; >= 2.
  std::optional<int> min_samples;
};

// What a change beyond the allowed effect that the test does not find
// significant is: Inconclusive (more data needed; the default), or Pass
// (Kayenta's rule: no significant difference passes) — for a last look,
// when no more data will come and the samples had the power to see it.
enum class UnprovenChange { kInconclusive, kPass };

struct JudgeConfig {
  double confidence = 0.95;    // in (0, 1)
  UnprovenChange unproven_change = UnprovenChange::kInconclusive;
  int min_samples = 50;        // >= 2
  double pass_score = 95;      // in [marginal_score, 100]
  double marginal_score = 75;  // in [0, pass_score]
  MetricRule defaults;
  // Rules of named metrics (each a copy of `defaults` with its overrides).
  // These metrics are required in every request.
  std::map<std::string, MetricRule> metrics;
  std::string source;  // file it was loaded from ("" when built in)

  // The rule of `name`: its own, else `defaults`.
  const MetricRule& RuleFor(const std::string& name) const;
  // The fewest samples per side `rule` judges on.
  int MinSamples(const MetricRule& rule) const {
    return rule.min_samples.value_or(min_samples);
  }
};

// InvalidArgument naming `source` and the field for anything invalid.
absl::StatusOr<JudgeConfig> ParseJudgeConfigYaml(const std::string& text,
                                                 const std::string& source);

// NotFound when the file cannot be read; otherwise as ParseJudgeConfigYaml.
absl::StatusOr<JudgeConfig> LoadJudgeConfig(const std::string& path);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_JUDGE_JUDGE_CONFIG_H_
