#ifndef PHASELOOP_CANARY_CONTROLLER_CANARY_CONTROLLER_H_
#define PHASELOOP_CANARY_CONTROLLER_CANARY_CONTROLLER_H_

// The canary rollout as a state machine over a durable v1::CanaryRun
// (canary_state_store.h): every transition is saved before the controller
// acts on it, so a controller killed at any instant and started again
// resumes or rolls back, never leaves an unknown version serving, and never
// records a step twice.
//
//   created → building (stable and candidate built, outputs checked equal:
//   a miscompile never reaches traffic) → the error budget's allowance
//   (none → refused; the plan's weights are clipped to it) → starting
//   (stable, baseline and canary instances) → stepping (per step: weights
//   set, the step's windows judged; Inconclusive extends the step up to its
//   maximum) → promoting (Pass at the last step: candidate → stable,
//   positive final reward) or rolling_back (Fail, or still Inconclusive at
//   the maximum: traffic back on stable, candidate marked failed, negative
//   final reward) or aborted (Error, e.g. no reward windows: no promotion,
//   no reward, traffic back on stable).
//
// Resume: a run found in a non-final phase first has the instances it
// recorded stopped; building/starting start over (builds are cached), a
// step without a recorded result starts over with fresh instances (its
// partial windows are never judged), promoting/rolling_back finish (each
// action idempotent).
//
// Everything with side effects goes through RolloutEnvironment, so the
// machine itself is deterministic given the environment's answers.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "canary/controller/canary_state_store.h"
#include "canary/controller/rollout_config.h"
#include "canary/controller/step_evidence.h"
#include "phaseloop/v1/canary.pb.h"

namespace phaseloop::canary {

struct VariantBuilds {
  std::string baseline_build_id;
  std::string candidate_build_id;
};

// How much exploration the error budget allows now (canary/budget_policy).
struct RolloutAllowance {
  bool allowed = true;
  double max_canary_weight = 0.5;
  std::string tier;
  std::vector<std::string> reasons;
  // The error budget remaining the allowance was computed from (worst
  // group); unset without budget data.
  std::optional<double> budget_remaining;
};

class RolloutEnvironment {
 public:
  virtual ~RolloutEnvironment() = default;
  virtual int64_t NowMs() = 0;
  // Sleeps until `ms` (wall clock) or until a stop is requested.
  virtual void SleepUntilMs(int64_t ms) = 0;
  // SIGINT/SIGTERM: the run stops where it is, its state kept for a resume.
  virtual bool StopRequested() = 0;

  // Builds stable and candidate and checks their outputs equal.
  // FailedPrecondition: the outputs differ (the message says where);
  // anything else: the builds could not be made.
  virtual absl::StatusOr<VariantBuilds> BuildAndCheck(
      const v1::CanaryRun& run) = 0;
  virtual absl::StatusOr<RolloutAllowance> Allowance(
      const v1::CanaryRun& run) = 0;
  // Starts stable (stable), baseline (stable) and canary (candidate)
  // instances and the traffic; records them in run->instances.
  virtual absl::Status StartInstances(v1::CanaryRun* run) = 0;
  // Stops every instance `run` records (also those a previous controller
  // started); idempotent.
  virtual absl::Status StopInstances(const v1::CanaryRun& run) = 0;
  // The canary and the baseline each take `weight`, the stable the rest.
  virtual absl::Status SetCanaryWeight(double weight) = 0;
  virtual absl::StatusOr<StepEvidence> CollectStep(const v1::CanaryRun& run,
                                                   int64_t from_ms,
                                                   int64_t to_ms) = 0;
  // How long CollectStep may wait past a step's end for its last windows
  // (the reward engine's lateness plus idle close).
  virtual int64_t WindowSettleMs() = 0;
  // The reward engine's window length: a side has reached a step's end
  // once its newest window ends at the last window boundary not after it.
  virtual int64_t RewardWindowMs() = 0;
  // The groups ("stable", "baseline", "canary", "rewards") whose process
  // `run` records has ended; by default none (nothing runs as a process).
  virtual std::vector<std::string> EndedInstances(const v1::CanaryRun& run) {
    return {};
  }
  virtual absl::Status Promote(const v1::CanaryRun& run) = 0;
  virtual absl::Status MarkFailed(const v1::CanaryRun& run,
                                  const std::string& reason) = 0;
  // The final reward and deployment records (replay buffer); idempotent.
  virtual absl::Status RecordOutcome(const v1::CanaryRun& run) = 0;
  // A line for the terminal (progress).
  virtual void Progress(const std::string& line) = 0;
  // The run as just saved (for metrics); by default nothing.
  virtual void StateSaved(const v1::CanaryRun& run) {}
};

struct CanaryRequest {
  std::string canary_id;
  std::string service;
  std::string candidate_version;
  std::string stable_version;
};

class CanaryController {
 public:
  CanaryController(CanaryStateStore store, RolloutConfig config,
                   RolloutEnvironment* environment);

  // Creates the run (or loads it, to resume) and drives it to a final
  // phase, or until a stop is requested (Cancelled; state kept). A run
  // already final is returned as it is. Errors saving the state stop the
  // run (its last saved state stands).
  absl::StatusOr<v1::CanaryRun> Run(const CanaryRequest& request);

 private:
  absl::Status Save(v1::CanaryRun& run);
  absl::Status Enter(v1::CanaryRun& run, const std::string& phase);
  absl::Status Build(v1::CanaryRun& run);
  absl::Status Start(v1::CanaryRun& run);
  absl::Status Step(v1::CanaryRun& run);
  // The error budget again before each step (Build read it once, but a
  // rollout runs for long and may resume days later): no longer readable
  // or allowing exploration, the rollout aborts (nothing blamed, stable
  // serves); a lower canary weight allowed now cuts the plan from this step.
  absl::Status CheckBudgetBeforeStep(v1::CanaryRun& run);
  absl::Status Finish(v1::CanaryRun& run);
  v1::CanaryStepResult JudgeStep(const v1::CanaryRun& run,
                                 const v1::CanaryStepPlan& plan,
                                 int64_t started_ms, int64_t to_ms,
                                 const StepEvidence& evidence, int extensions,
                                 bool last_look) const;
  double FinalReward(const v1::CanaryRun& run, bool promoted) const;

  CanaryStateStore store_;
  RolloutConfig config_;
  RolloutEnvironment* env_;
};

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_CONTROLLER_CANARY_CONTROLLER_H_
