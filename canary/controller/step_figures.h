#ifndef PHASELOOP_CANARY_CONTROLLER_STEP_FIGURES_H_
#define PHASELOOP_CANARY_CONTROLLER_STEP_FIGURES_H_

// Figures read back from a recorded canary step (CanaryStepResult), for the
// tables and charts of `phaseloop canary run`, the canary report and the
// loop report — one reading, so they never disagree.

#include "phaseloop/v1/canary.pb.h"

namespace phaseloop::canary {

struct StepP95 {
  bool known = false;  // false when the step judged no latency
  double baseline_ms = 0;
  double canary_ms = 0;
};

// The step's p95 latency per side: the judged latency_ms metric's values at
// its percentile (every request of the step). Steps recorded before
// latency_ms (metric p95_latency_ms, one p95 per window) give the median of
// their windows' p95s.
StepP95 StepP95Ms(const v1::CanaryStepResult& step);

// The run's measured relative reward: its judged steps' relative rewards
// (log(p95 baseline / p95 canary)) weighted by their canary windows; 0 when
// no step judged windows on both sides. The final reward shapes it (a pass
// bonus or a fail penalty); this is the speed it saw.
double MeasuredRelativeReward(const v1::CanaryRun& run);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_CONTROLLER_STEP_FIGURES_H_
