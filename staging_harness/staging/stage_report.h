#ifndef PHASELOOP_STAGING_HARNESS_STAGING_STAGE_REPORT_H_
#define PHASELOOP_STAGING_HARNESS_STAGING_STAGE_REPORT_H_

// `phaseloop stage`'s output: a table for people, JSON for machines.

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "staging_harness/profiling/bolt_optimization.h"
#include "staging_harness/staging/stage_workload.h"

namespace phaseloop::staging {

// One row per workload: verdict, wall speedup with its interval, p-value,
// pairs, median times, CPU speedup, instructions ratio, executed IR ratio;
// then the details (why unusable, what miscompiled, what was blamed, the
// executed IR counts or why unavailable, a busy machine's warnings, runs
// too short to time well).
std::string FormatStageTable(const std::vector<StageResult>& results);

// {"workloads": [{"workload", "split", "verdict", "detail",
//   "baseline": {"build_id", "artifacts_hash", "build_s"}, "candidate": ...,
//   "speedup": {"median", "low", "high"}, "cpu_speedup": {...},
//   "p_value", "pairs", "stop_reason", "instructions_ratio",
//   "reward": {"value", "low", "high"}, "mismatch": {...}, "blamed": [...],
//   "executed_ir": {"baseline": {"count", "processes"} | {"unavailable"},
//                   "candidate": ...}, "executed_ir_ratio",
//   "machine": {"available", "timed_cpu" | null, "cpus": [{"cpu", "busy",
//               "steal"}], "steal", "load_start", "load_end",
//               "baseline_cpu_share", "candidate_cpu_share", "warnings"},
//   "short_runs": ShortRunsWarning | null}]}
// (executed_ir when counted; executed_ir_ratio when both were available,
// or 1 for identical builds; machine for timed workloads, its /proc
// figures when available). `error` (a workload that could not be staged
// stopped the run) adds "error": the message, so --json always prints JSON.
std::string FormatStageJson(const std::vector<StageResult>& results,
                            const std::string& error = "");

// What BOLT did to a candidate (StageResult::bolt), for the stage's and the
// runtime search's reports: {"artifacts": [{"path", "optimized",
// "profiles", "estimate", "note"}], "built_artifacts_hash", "input_seed"
// (null for the timed inputs), "generated_inputs", "run_s", "bolt_s"}; and
// one sentence naming the inputs its profile came from and each artifact's
// fate.
nlohmann::json BoltJson(const profiling::BoltResult& b);
std::string BoltNote(const profiling::BoltResult& b);

}  // namespace phaseloop::staging

#endif  // PHASELOOP_STAGING_HARNESS_STAGING_STAGE_REPORT_H_
