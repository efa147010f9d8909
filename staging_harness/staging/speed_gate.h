#ifndef PHASELOOP_STAGING_HARNESS_STAGING_SPEED_GATE_H_
#define PHASELOOP_STAGING_HARNESS_STAGING_SPEED_GATE_H_

// The publish gate of a speed (runtime) policy: staging on workloads it
// never trained on, each against the baseline. It passes only when every
// workload was staged to a verdict (measured or byte-identical), none is
// slower — the upper end of the speedup's 95 % interval below 1 counts as
// slower (kSpeedGateConfidence) — and none miscompiled or was unusable. The
// geometric mean of the median speedups is reported beside the verdict (not
// part of it: a policy that slows no workload is safe to publish; whether it is
// worth publishing is the geomean's to show).

#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "staging_harness/staging/stage_workload.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::staging {

// The confidence of the gate's intervals (RunSpeedGate with options).
inline constexpr double kSpeedGateConfidence = 0.95;

struct SpeedGateResult {
  bool passed = false;
  int workloads = 0;
  int slower = 0;              // measured, interval's upper end < 1
  int faster = 0;              // measured, interval's lower end > 1
  int miscompiled = 0;         // verdict miscompile
  int unusable = 0;            // verdict unusable
  int untimed = 0;             // verdict checked (SpeedGateOptions::timed off)
  double geomean_speedup = 1;  // of the medians (identical: 1)
  // One line per reason it failed, naming the workload ("bzip2: slower:
  // 0.981 [0.975, 0.987]"); empty when it passed.
  std::vector<std::string> refusals;
  std::vector<StageResult> results;
};

// The gate's verdict over staged results (pure; for tests and for callers
// that staged already).
SpeedGateResult JudgeSpeedPolicy(std::vector<StageResult> results);

// Stages `policy_spec` against options.baseline_policy on every workload
// (options.work_dir is the root: one directory per workload below it;
// options.candidate_policy is ignored), then judges. An error staging a
// workload (it cannot be built at all) is an error, not a refusal.
absl::StatusOr<SpeedGateResult> RunSpeedGate(
    const std::string& policy_spec,
    const std::vector<workloads::Workload>& workloads, StageOptions options,
    std::ostream& progress);

// What the learner's publish gate needs to say, without the lab's types.
struct SpeedGateOptions {
  std::string split = "test";      // the workloads of this split ...
  std::vector<std::string> names;  // ... only these, when given
  std::string workloads_dir = "configs/workloads";  // ... found here
  std::string cc;         // phaseloop-cc (runner::FindCompilers's --cc)
  std::string work_dir;   // "" = $TMPDIR/phaseloop-speed-gate
  double budget_s = 120;  // timing per workload
  // The wrapper's object cache for every build (a lab setting: objects are
  // reused only under an identical content key); "" = none.
  std::string object_cache_dir;
  int max_pairs = 40;
  // false: correctness only. Each workload's outputs are checked against
  // the baseline's and nothing is timed, so the gate refuses only a policy
  // that miscompiles (or a workload that cannot be judged). For smoke runs
  // and tests whose subject is not the policy's speed; a publish gate
  // worth the name times.
  bool timed = true;
};

// Whether RunSpeedGate could run: the split has workloads (each loads) and
// the compilers are found. The same errors RunSpeedGate would give, before
// anything is spent.
absl::Status CheckSpeedGate(const SpeedGateOptions& options);

// Loads the split's workloads and stages `policy_spec` on them against
// clang's own pipeline at -O3 (the speed baseline). InvalidArgument when
// the directory holds no workload of the split.
absl::StatusOr<SpeedGateResult> RunSpeedGate(const std::string& policy_spec,
                                             const SpeedGateOptions& options,
                                             std::ostream& progress);

// The verdict as a few readable lines (per workload, then the verdict).
std::string FormatSpeedGate(const SpeedGateResult& gate);

}  // namespace phaseloop::staging

#endif  // PHASELOOP_STAGING_HARNESS_STAGING_SPEED_GATE_H_
