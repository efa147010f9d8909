#include "canary/judge/judge.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "staging_harness/stats/exceedance_test.h"
#include "staging_harness/stats/mann_whitney.h"
#include "staging_harness/stats/percentile.h"

namespace phaseloop::canary {
namespace {

SampleSummary Summarize(const std::vector<double>& values, double percentile) {
  SampleSummary summary;
  summary.count = static_cast<int>(values.size());
  if (values.empty()) return summary;
  summary.median = stats::Percentile(values, 50);
  summary.p95 = stats::Percentile(values, 95);
  summary.percentile = stats::Percentile(values, percentile);
  return summary;
}

std::string PercentileName(double p) {
  return p == 50 ? "median" : absl::StrFormat("p%g", p);
}

// Judges one metric whose samples are present (steps 2-5 of judge.h).
void JudgeSamples(const Samples& samples, const MetricRule& rule,
                  const JudgeConfig& config, MetricJudgement& out) {
  const int fewest = std::min(out.baseline.count, out.canary.count);
  const int min_samples = config.MinSamples(rule);
  if (fewest < min_samples) {
    out.outcome = Outcome::kInconclusive;
    out.reason =
        absl::StrCat("not enough data: baseline has ", out.baseline.count,
                     " samples, canary ", out.canary.count, "; need ",
                     min_samples, " on each side (min_samples)");
    return;
  }
  const double base = out.baseline.percentile;
  const double cand = out.canary.percentile;
  // Finite samples near the double range (+-1.7e308) give an interpolated
  // percentile that overflows: no ratio can be told (it read 0, a Pass).
  if (!std::isfinite(base) || !std::isfinite(cand)) {
    out.outcome = Outcome::kInconclusive;
    out.reason = absl::StrCat(
        "the ", PercentileName(rule.percentile),
        " of the samples overflows (values near the largest double): no "
        "ratio can be told; check the metric's units");
    return;
  }
  if (base > 0) {
    out.ratio = cand / base;
  } else {
    out.ratio = cand == base ? 1.0 : std::numeric_limits<double>::infinity();
  }
  // Both samples are non-empty and finite here, so the tests cannot fail.
  auto test = stats::MannWhitneyU(samples.baseline, samples.canary);
  out.p_value = test.ok() ? test->p_value : 1.0;
  out.test = "mann_whitney";
  // The tail's share of the pooled samples: too few values beyond the
  // percentile (8 windows' error rates a side) give the tail test no power,
  // and its Bonferroni share would only halve Mann-Whitney's.
  const double tail_share =
      std::min(rule.percentile, 100 - rule.percentile) / 100;
  const double in_tail =
      tail_share *
      static_cast<double>(samples.baseline.size() + samples.canary.size());
  if (rule.percentile != 50 && in_tail >= kMinTailSamples) {
    // A rule on a high (or low) percentile is tested on that tail too:
    // Mann-Whitney tests location, and a regression of the slowest tenth
    // alone hardly moves it (a p95 20 % higher passed at p = 0.12). Either
    // test may find the change; Bonferroni keeps the error rate.
    auto tail = stats::ExceedanceTest(samples.baseline, samples.canary,
                                      rule.percentile);
    const double tail_p = tail.ok() ? tail->p_value : 1.0;
    out.p_value = std::min(1.0, 2 * std::min(*out.p_value, tail_p));
    out.test = absl::StrCat("mann_whitney+exceedance_",
                            PercentileName(rule.percentile));
  }

  if (rule.slo_p95 && out.canary.p95 > *rule.slo_p95) {
    out.outcome = Outcome::kFail;
    out.reason = absl::StrFormat("canary p95 %g is above the SLO threshold %g",
                                 out.canary.p95, *rule.slo_p95);
    return;
  }
  const bool significant = *out.p_value < 1 - config.confidence;
  const std::string what = PercentileName(rule.percentile);
  const bool up_is_bad = rule.direction != Direction::kDecrease;
  const bool down_is_bad = rule.direction != Direction::kIncrease;
  const bool too_high =
      base > 0 ? cand > base * rule.allowed_increase : cand > base;
  const bool too_low =
      base > 0 ? cand < base * rule.allowed_decrease : cand < base;
  if (significant && up_is_bad && too_high) {
    out.outcome = Outcome::kFail;
    out.reason = absl::StrFormat(
        "canary %s %g is %.4gx baseline %g (allowed up to %gx), a "
        "significant increase (p=%.3g < %.3g)",
        what, cand, *out.ratio, base, rule.allowed_increase, *out.p_value,
        1 - config.confidence);
    return;
  }
  if (significant && down_is_bad && too_low) {
    out.outcome = Outcome::kFail;
    out.reason = absl::StrFormat(
        "canary %s %g is %.4gx baseline %g (allowed down to %gx), a "
        "significant decrease (p=%.3g < %.3g)",
        what, cand, *out.ratio, base, rule.allowed_decrease, *out.p_value,
        1 - config.confidence);
    return;
  }
  // A change the samples cannot tell from noise, but whose size would fail:
  // not proven either way, so more data, never a Pass on too little power.
  const bool looks_too_high = up_is_bad && too_high;
  if (!significant && (looks_too_high || (down_is_bad && too_low)) &&
      config.unproven_change == UnprovenChange::kInconclusive) {
    out.outcome = Outcome::kInconclusive;
    out.reason = absl::StrFormat(
        "canary %s %g is %.4gx baseline %g (allowed %s %gx), but the "
        "difference is not significant (p=%.3g >= %.3g): more data needed",
        what, cand, *out.ratio, base, looks_too_high ? "up to" : "down to",
        looks_too_high ? rule.allowed_increase : rule.allowed_decrease,
        *out.p_value, 1 - config.confidence);
    return;
  }
  out.outcome = Outcome::kPass;
  if (!significant && (looks_too_high || (down_is_bad && too_low))) {
    out.reason = absl::StrFormat(
        "canary %s %g is %.4gx baseline %g, but the difference is not "
        "significant (p=%.3g >= %.3g): passes (unproven_change: pass)",
        what, cand, *out.ratio, base, *out.p_value, 1 - config.confidence);
  } else if (!significant) {
    out.reason = absl::StrFormat(
        "no significant difference (p=%.3g >= %.3g); %s ratio %.4gx",
        *out.p_value, 1 - config.confidence, what, *out.ratio);
  } else {
    out.reason = absl::StrFormat(
        "significant difference (p=%.3g) within the allowed effect or in the "
        "harmless direction; %s ratio %.4gx",
        *out.p_value, what, *out.ratio);
  }
}

MetricJudgement JudgeMetric(const std::string& name, const Samples* samples,
                            const JudgeConfig& config) {
  const MetricRule& rule = config.RuleFor(name);
  MetricJudgement out;
  out.name = name;
  out.critical = rule.critical;
  out.weight = rule.weight;
  if (samples == nullptr) {
    out.outcome = Outcome::kError;
    out.reason = absl::StrCat(
        "no data: the judge config",
        config.source.empty() ? "" : absl::StrCat(" (", config.source, ")"),
        " names this metric but the request has no samples for it; check "
        "its metric pipeline");
    return out;
  }
  if (!stats::AllFinite(samples->baseline) ||
      !stats::AllFinite(samples->canary)) {
    out.outcome = Outcome::kError;
    out.reason =
        "bad data: a sample is not a finite number (NaN or "
        "infinity); check the metric pipeline";
    return out;
  }
  out.baseline = Summarize(samples->baseline, rule.percentile);
  out.canary = Summarize(samples->canary, rule.percentile);
  if (samples->baseline.empty() || samples->canary.empty()) {
    out.outcome = Outcome::kError;
    out.reason = absl::StrCat(
        "no data: ",
        samples->baseline.empty() && samples->canary.empty()
            ? "neither baseline nor canary has any samples"
            : (samples->baseline.empty() ? "baseline has no samples"
                                         : "canary has no samples"),
        "; a broken metric pipeline is an error, not a verdict");
    return out;
  }
  JudgeSamples(*samples, rule, config, out);
  return out;
}

}  // namespace

std::string OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass:
      return "Pass";
    case Outcome::kFail:
      return "Fail";
    case Outcome::kInconclusive:
      return "Inconclusive";
    case Outcome::kError:
      return "Error";
  }
  return "Error";
}

Judgement Judge(const std::map<std::string, Samples>& metrics,
                const JudgeConfig& config) {
  Judgement judgement;
  std::map<std::string, const Samples*> names;
  for (const auto& [name, samples] : metrics) names[name] = &samples;
  for (const auto& [name, rule] : config.metrics) {
    names.emplace(name, nullptr);  // required: Error when absent
  }
  double judged_weight = 0, pass_weight = 0;
  bool any_error = false, critical_fail = false, any_inconclusive = false;
  for (const auto& [name, samples] : names) {
    MetricJudgement metric = JudgeMetric(name, samples, config);
    const std::string line = absl::StrCat(
        name, ": ", OutcomeName(metric.outcome), ": ", metric.reason);
    switch (metric.outcome) {
      case Outcome::kError:
        any_error = true;
        judgement.reasons.push_back(line);
        break;
      case Outcome::kInconclusive:
        any_inconclusive = true;
        judgement.reasons.push_back(line);
        break;
      case Outcome::kFail:
        judged_weight += metric.weight;
        if (metric.critical) {
          critical_fail = true;
          judgement.reasons.push_back(
              absl::StrCat(name, " (critical): Fail: ", metric.reason));
        } else {
          judgement.reasons.push_back(line);
        }
        break;
      case Outcome::kPass:
        judged_weight += metric.weight;
        pass_weight += metric.weight;
        break;
    }
    judgement.metrics.push_back(std::move(metric));
  }
  if (names.empty()) {
    judgement.outcome = Outcome::kError;
    judgement.reasons.push_back(
        "no data: the request names no metrics and the config requires none");
    return judgement;
  }
  judgement.score = judged_weight > 0 ? 100 * pass_weight / judged_weight : 0;
  const std::string score_text =
      absl::StrFormat("score %.4g (pass >= %g, marginal %g)", judgement.score,
                      config.pass_score, config.marginal_score);
  if (any_error) {
    judgement.outcome = Outcome::kError;
  } else if (critical_fail) {
    judgement.outcome = Outcome::kFail;
    judgement.reasons.push_back("a critical metric failed");
  } else if (judged_weight == 0) {
    judgement.outcome = Outcome::kInconclusive;
    judgement.reasons.push_back("no metric could be judged");
  } else if (judgement.score < config.marginal_score) {
    judgement.outcome = Outcome::kFail;
    judgement.reasons.push_back(score_text + ": below marginal");
  } else if (judgement.score < config.pass_score) {
    judgement.outcome = Outcome::kInconclusive;
    judgement.reasons.push_back(score_text + ": between marginal and pass");
  } else if (any_inconclusive) {
    judgement.outcome = Outcome::kInconclusive;
    judgement.reasons.push_back(score_text +
                                " on the judged metrics, but some lack data");
  } else {
    judgement.outcome = Outcome::kPass;
    judgement.reasons.push_back(score_text);
  }
  return judgement;
}

}  // namespace phaseloop::canary
