#ifndef PHASELOOP_CANARY_CONTROLLER_ROLLOUT_CONFIG_H_
#define PHASELOOP_CANARY_CONTROLLER_ROLLOUT_CONFIG_H_

// How a canary rolls out: the `rollout:` section of a service file
// (configs/services/*.yaml documents every field):
//
//   rollout:
//     steps:                  # the canary's share of traffic per step; the
//       - {weight: 0.05, duration_s: 30}   # fresh baseline gets the same
//       - {weight: 0.25, duration_s: 30}   # share, the stable the rest
//       - {weight: 0.50, duration_s: 30}
//     warmup_s: 5             # the start of every step is not judged
//     max_extension_s: 30     # an Inconclusive step is extended up to this
//     extension_s: 10         # ... this much at a time
//     judge: ../canary/rollout_judge.yaml   # relative to the service file
//     pass_bonus: 0.01        # final reward = max(r, 0) + pass_bonus
//     fail_penalty: 0.1       #   or min(r, 0) - fail_penalty
//
// Weights are in (0, 0.5] (the canary and the baseline each take one
// share), nondecreasing; durations > warmup_s. Unknown fields are errors;
// every error names the file and the field.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "canary/judge/judge_config.h"
#include "phaseloop/v1/canary.pb.h"

namespace YAML {
class Node;
}

namespace phaseloop::canary {

struct RolloutConfig {
  std::vector<v1::CanaryStepPlan> steps;
  double warmup_s = 5;
  double max_extension_s = 30;
  double extension_s = 10;
  JudgeConfig judge;  // loaded from `judge:`, else DefaultRolloutJudge()
  double pass_bonus = 0.01;
  double fail_penalty = 0.1;
  // At a step's last look (its maximum duration reached), a rise beyond the
  // allowed effect that the rank test over the step's requests does not
  // find significant passes (true, `unproven_at_max: pass`, the default:
  // Kayenta's rule once the extensions have added what data they can) or
  // rolls back (false, `rollback`). Too little data still rolls back.
  bool pass_unproven_at_max = true;
};

// The judge a rollout uses unless its file names one: the metrics are one
// sample per reward window (p95_latency_ms, error_rate), so min_samples is
// small; configs/canary/rollout_judge.yaml holds the same rules.
JudgeConfig DefaultRolloutJudge();

// `node` is the `rollout:` mapping of `source`; relative `judge:` paths are
// resolved against `source`'s directory.
absl::StatusOr<RolloutConfig> ParseRolloutConfig(const YAML::Node& node,
                                                 const std::string& source);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_CONTROLLER_ROLLOUT_CONFIG_H_
