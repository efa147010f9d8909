#ifndef PHASELOOP_CANARY_CONTROLLER_STEP_EVIDENCE_H_
#define PHASELOOP_CANARY_CONTROLLER_STEP_EVIDENCE_H_

// What a canary step is judged on: the reward engine's per-window Reward
// records (topic phaseloop.rewards) of the baseline and the canary
// deployment whose windows lie inside the step's judged range, turned into
// the judge's samples:
//   latency_ms   every request of the step on that side, milliseconds: the
//                windows' sketches (Reward.sketch) merged, each bucket's
//                representative value once per request in it (within
//                0.5 % of the true latency). One p95 of a 2 s window of
//                40 canary requests is too noisy to judge 5 % on; the step's
//                hundreds of requests are not.
//   latency_median_ms  the same requests, so the rollout judge can hold
//                their median to its own rule beside latency_ms's p95 (a
//                p95 of 500 requests moves by 10 % between A/A steps; a
//                median reads a uniform slowdown more steadily).
//   error_rate   failed / all requests, one sample per window.
// A window without requests gives no sample. A pure function, so a step
// replayed from the same records gives the same evidence.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "canary/judge/judge.h"
#include "phaseloop/v1/reward.pb.h"

namespace phaseloop::canary {

// Above this many requests on a side, latency_ms holds this many values at
// evenly spaced ranks of the merged distribution (its quantiles), which
// bounds the judge's memory and keeps the rank test conservative.
inline constexpr int64_t kMaxLatencySamples = 100000;

struct StepEvidence {
  std::map<std::string, Samples> metrics;
  int baseline_windows = 0;
  int canary_windows = 0;
  // Windows with requests whose record carries no usable sketch (an engine
  // older than Reward.sketch, a sketch of another accuracy, or one whose
  // count is not the record's): their requests are missing from latency_ms,
  // and the controller says so in the step's reasons.
  int windows_without_sketch = 0;
  // Each judged window's p95, milliseconds, in window order (what reports
  // draw; not judged).
  std::vector<double> baseline_window_p95_ms;
  std::vector<double> canary_window_p95_ms;
  // The newest window end seen on each side (0 when none): the reward
  // engine has closed every window up to it.
  int64_t baseline_newest_end_ms = 0;
  int64_t canary_newest_end_ms = 0;
  // log(baseline p95 / canary p95) over the step's requests (the merged
  // sketches' interpolated p95s); 0 when a side has none. > 0: the canary is
  // faster.
  double relative_reward = 0;
};

struct StepWindowFilter {
  std::string service;
  std::string baseline_deployment_id;
  std::string canary_deployment_id;
  int64_t from_ms = 0;  // window_start_ms >= from_ms
  int64_t to_ms = 0;    // window_end_ms <= to_ms
};

// Records of other services, deployments or times are ignored; of several
// records with one reward_id (a replay), the last counts.
StepEvidence EvidenceFromRewards(const std::vector<v1::Reward>& rewards,
                                 const StepWindowFilter& filter);

// Every Reward on `topic` for `service` (read to its end without joining a
// group). Errors: Unavailable when the cluster cannot be reached,
// DeadlineExceeded when the topic could not be read within `timeout_ms`.
absl::StatusOr<std::vector<v1::Reward>> ReadServiceRewards(
    const std::string& bootstrap, const std::string& topic,
    const std::string& service, int64_t timeout_ms);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_CONTROLLER_STEP_EVIDENCE_H_
