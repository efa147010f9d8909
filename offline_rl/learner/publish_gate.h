#ifndef PHASELOOP_OFFLINE_RL_LEARNER_PUBLISH_GATE_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_PUBLISH_GATE_H_

// The publish gate: a newly trained policy is published only if it beats the
// current one on a corpus split (the validation split by default), both
// evaluated by offline_rl/evaluation's EvaluatePolicy in the same run, in
// `single` mode, on the policy objective's metric (evaluation::
// OzRatioMetric: alloc_size: alloc_oz_ratio; text_size: text_oz_ratio;
// ir_count: geomean_oz_ratio; each > 1 = smaller than -Oz).
// Runtime policies are judged by staging and canary, not by a corpus:
// Unimplemented. Compiles every module of the split in process (LLVM).

#include <string>

#include "absl/status/statusor.h"

namespace phaseloop::offline_rl {

struct GateOptions {
  std::string corpus_dir;      // a `phaseloop corpus build` directory
  std::string current_policy;  // the artifact (or policy spec) to beat
  std::string split = "validation";
  int threads = 1;
};

struct GateResult {
  bool passed = false;  // candidate_score > current_score, no failed module
  std::string metric;   // evaluation::OzRatioMetric of the objective
  double candidate_score = 0;
  double current_score = 0;
  int modules = 0;
  int candidate_failed = 0;
  // The speed gate's report (per workload, verdict, refusals); "" for the
  // corpus gate.
  std::string report;
};

// Evaluates the artifact at `candidate_path` (objective `objective`) and
// options.current_policy on the split.
absl::StatusOr<GateResult> RunPublishGate(const std::string& candidate_path,
                                          const std::string& objective,
                                          const GateOptions& options);

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_PUBLISH_GATE_H_
