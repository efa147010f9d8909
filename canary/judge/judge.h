#ifndef PHASELOOP_CANARY_JUDGE_JUDGE_H_
#define PHASELOOP_CANARY_JUDGE_JUDGE_H_

// The canary judge: baseline and canary samples per metric (latencies of
// requests, or one p95 per SLI window) in, Pass / Fail / Inconclusive /
// Error out, with a reason for every metric and for the whole. A pure
// function: no I/O, no clock, the same samples give the same judgement.
//
// Per metric, in this order (the first that applies decides):
//   1. no data: either side has no samples, or a sample is not a finite
//      number → Error (a broken metric pipeline is never Pass or Fail);
//      a metric the config names but the request lacks is Error too;
//   2. fewer than min_samples on either side → Inconclusive ("not enough
//      data");
//   3. a SLO threshold (slo_p95) below the canary's p95 → Fail;
//   4. the Mann-Whitney U test (staging_harness/stats) finds a change
//      (p < 1 - confidence) — for a rule on a percentile other than the
//      median, with at least kMinTailSamples pooled samples expected beyond
//      it, it or the exceedance test of that percentile (the shares of
//      each side above the pooled percentile, Fisher's exact test: the
//      tail, which a test of location hardly sees), Bonferroni-corrected —
//      and the effect size — canary/baseline ratio of
//      the rule's percentile — is beyond allowed_increase (direction
//      increase or either) or allowed_decrease (decrease or either) → Fail;
//   5. no change found, but the effect size is beyond what the rule allows
//      in a bad direction → Inconclusive ("more data needed": a small
//      sample never passes a canary that looks too slow);
//      — unless unproven_change is pass (a last look: then Pass, and the
//      reason says the change was not significant);
//   6. otherwise Pass.
// The whole (the shape of Kayenta's NetflixACAJudge):
//   - any metric Error → Error;
//   - a critical metric Fail → Fail;
//   - score = 100 × weight of passing metrics / weight of judged (Pass or
//     Fail) metrics; no judged metric → Inconclusive;
//   - score < marginal → Fail; score >= pass → Pass; between → Inconclusive;
//   - a Pass while some metric is Inconclusive becomes Inconclusive (it may
//     not ship on part of the evidence); a Fail stands.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "canary/judge/judge_config.h"

namespace phaseloop::canary {

// A percentile rule's tail is tested when the pooled samples put at least
// this many beyond the percentile (30 at p95 over 600 requests; not for 8
// windows' error rates a side, where it could find nothing).
inline constexpr double kMinTailSamples = 10;

enum class Outcome { kPass, kFail, kInconclusive, kError };

std::string OutcomeName(Outcome outcome);  // "Pass", "Fail", ...

struct Samples {
  std::vector<double> baseline;
  std::vector<double> canary;
};

// Summary of one side's samples (zeros when it has none).
struct SampleSummary {
  int count = 0;
  double median = 0;
  double p95 = 0;
  double percentile = 0;  // the rule's percentile (the effect size's)
};

struct MetricJudgement {
  std::string name;
  Outcome outcome = Outcome::kError;
  std::string reason;
  bool critical = false;
  double weight = 1;
  SampleSummary baseline;
  SampleSummary canary;
  // Set once both sides have enough data:
  std::optional<double> ratio;  // canary / baseline at the percentile
  // Two-sided: Mann-Whitney's; for a rule on a percentile other than the
  // median, the smaller of it and the exceedance test's at that percentile,
  // doubled (Bonferroni), at most 1.
  std::optional<double> p_value;
  std::string test;  // "mann_whitney" or "mann_whitney+exceedance_p95"
};

struct Judgement {
  Outcome outcome = Outcome::kError;
  double score = 0;  // 0..100; 0 when nothing was judged
  std::vector<std::string> reasons;
  std::vector<MetricJudgement> metrics;  // in name order
};

Judgement Judge(const std::map<std::string, Samples>& metrics,
                const JudgeConfig& config);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_JUDGE_JUDGE_H_
