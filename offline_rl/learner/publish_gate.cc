#include "offline_rl/learner/publish_gate.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "offline_rl/evaluation/policy_evaluation.h"

namespace phaseloop::offline_rl {
absl::StatusOr<GateResult> RunPublishGate(const std::string& candidate_path,
                                          const std::string& objective,
                                          const GateOptions& options) {
  GateResult result;
  result.metric = evaluation::OzRatioMetric(objective);
  if (result.metric.empty()) {
    return absl::UnimplementedError(absl::StrCat(
        "no corpus publish gate for objective \"", objective,
        "\": runtime policies are judged by staging and canary; drop "
        "--gate-corpus/--gate-against"));
  }
  evaluation::EvalOptions eval;
  eval.corpus_dir = options.corpus_dir;
  eval.split = options.split;
  eval.mode = "single";
  eval.threads = options.threads;
  eval.policy = candidate_path;
  auto candidate = evaluation::EvaluatePolicy(eval);
  if (!candidate.ok()) {
    return absl::Status(candidate.status().code(),
                        absl::StrCat("publish gate, new policy: ",
                                     candidate.status().message()));
  }
  eval.policy = options.current_policy;
  auto current = evaluation::EvaluatePolicy(eval);
  if (!current.ok()) {
    return absl::Status(
        current.status().code(),
        absl::StrCat("publish gate, current policy ", options.current_policy,
                     ": ", current.status().message()));
  }
  result.modules = candidate->aggregates.modules;
  result.candidate_failed = candidate->aggregates.failed;
  result.candidate_score =
      evaluation::OzRatio(candidate->aggregates, result.metric);
  result.current_score =
      evaluation::OzRatio(current->aggregates, result.metric);
  result.passed = result.candidate_failed == 0 &&
                  result.candidate_score > result.current_score;
  return result;
}

}  // namespace phaseloop::offline_rl
