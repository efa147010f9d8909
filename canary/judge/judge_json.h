#ifndef PHASELOOP_CANARY_JUDGE_JUDGE_JSON_H_
#define PHASELOOP_CANARY_JUDGE_JUDGE_JSON_H_

// The judge's wire format over HTTP (judge_http_server.h; README "Judge a
// canary"). A request is either
//   {"metrics": {"latency_ms": {"baseline": [12.1, 13.0, ...],
//                               "canary":   [12.4, ...]}, ...}}
// or Flagger's webhook envelope carrying that same "metrics" object as a
// JSON string in its metadata (Flagger's metadata values are strings):
//   {"name": "podinfo", "namespace": "test", "phase": "Progressing",
//    "metadata": {"metrics": "{\"latency_ms\": {\"baseline\": [...], ...}}"}}
// The response (for Argo Rollouts' web provider, jsonPath "{$.result}"):
//   {"result": {"outcome": "Pass"|"Fail"|"Inconclusive"|"Error",
//               "score": 100, "reasons": ["..."],
//               "metrics": [{"name", "outcome", "reason", "critical",
//                            "weight", "baseline": {count, median, p95,
//                            percentile}, "canary": {...}, "ratio",
//                            "p_value"}]}}
// ratio and p_value are null when the metric had too little data (or the
// ratio is unbounded: a zero baseline).

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "canary/judge/judge.h"

namespace phaseloop::canary {

// InvalidArgument saying what is wrong and where (e.g. "metrics.latency_ms.
// canary[3]: expected a number, got \"fast\"").
absl::StatusOr<std::map<std::string, Samples>> ParseJudgeRequest(
    const std::string& body);

std::string JudgementToJson(const Judgement& judgement);

// {"error": message}.
std::string ErrorToJson(const std::string& message);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_JUDGE_JUDGE_JSON_H_
