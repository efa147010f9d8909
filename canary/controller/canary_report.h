#ifndef PHASELOOP_CANARY_CONTROLLER_CANARY_REPORT_H_
#define PHASELOOP_CANARY_CONTROLLER_CANARY_REPORT_H_

// What people and machines read about canary runs: a table of runs
// (`phaseloop canary list`), and per run a self-contained HTML page
// (common/report: inline SVG charts, no network at view time, the in-browser
// chart check tools/check_report.sh reads) with the judgement of
// every step, its statistics, the per-window p95 latencies of baseline and
// canary, the traffic steps and the error budget spent; beside it the run's
// state as JSON (canary_state_store.h's format).

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "canary/controller/canary_state_store.h"
#include "phaseloop/v1/canary.pb.h"

namespace phaseloop::canary {

// One line per run, newest first: id, service, candidate, phase, steps
// judged, final reward, started (UTC). The phase of a run in `stopped` (ids
// of unfinished runs no controller drives now) reads "stopped: PHASE".
std::string CanaryRunsTable(const std::vector<v1::CanaryRun>& runs,
                            const std::set<std::string>& stopped = {});

std::string CanaryReportHtml(const v1::CanaryRun& run);

// Writes report.html and report.json into the run's directory
// (atomically); returns the HTML's path.
absl::StatusOr<std::string> WriteCanaryReport(const CanaryStateStore& store,
                                              const v1::CanaryRun& run);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_CONTROLLER_CANARY_REPORT_H_
